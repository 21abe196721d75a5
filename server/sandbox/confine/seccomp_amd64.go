//go:build linux && amd64

package confine

// System call numbers (amd64), written out rather than taken from
// golang.org/x/sys/unix (see the package comment); TestConstantsMatchXSysUnix
// checks every value.
const (
	sysReboot          = 169
	sysKexecLoad       = 246
	sysKexecFileLoad   = 320
	sysInitModule      = 175
	sysFinitModule     = 313
	sysDeleteModule    = 176
	sysMount           = 165
	sysUmount2         = 166
	sysPivotRoot       = 155
	sysMoveMount       = 429
	sysFsmount         = 432
	sysFsconfig        = 431
	sysMountSetattr    = 442
	sysOpenTree        = 428
	sysSwapon          = 167
	sysSwapoff         = 168
	sysSettimeofday    = 164
	sysClockSettime    = 227
	sysClockAdjtime    = 305
	sysAdjtimex        = 159
	sysSethostname     = 170
	sysSetdomainname   = 171
	sysPtrace          = 101
	sysProcessVmWritev = 311
	sysAcct            = 163
	sysPidfdSendSignal = 424
	sysKill            = 62
	sysTkill           = 200
	sysTgkill          = 234
	sysPidfdOpen       = 434
	sysSocket          = 41
	sysSeccomp         = 317
	sysIopl            = 172
	sysIoperm          = 173
)

const auditArch = 0xc000003e // AUDIT_ARCH_X86_64

// archHostCalls: raw port I/O can reset the machine.
var archHostCalls = []uintptr{sysIopl, sysIoperm}
