//go:build linux && arm64

package confine

// System call numbers (arm64), written out rather than taken from
// golang.org/x/sys/unix (see the package comment); TestConstantsMatchXSysUnix
// checks every value.
const (
	sysReboot          = 142
	sysKexecLoad       = 104
	sysKexecFileLoad   = 294
	sysInitModule      = 105
	sysFinitModule     = 273
	sysDeleteModule    = 106
	sysMount           = 40
	sysUmount2         = 39
	sysPivotRoot       = 41
	sysMoveMount       = 429
	sysFsmount         = 432
	sysFsconfig        = 431
	sysMountSetattr    = 442
	sysOpenTree        = 428
	sysSwapon          = 224
	sysSwapoff         = 225
	sysSettimeofday    = 170
	sysClockSettime    = 112
	sysClockAdjtime    = 266
	sysAdjtimex        = 171
	sysSethostname     = 161
	sysSetdomainname   = 162
	sysPtrace          = 117
	sysProcessVmWritev = 271
	sysAcct            = 89
	sysPidfdSendSignal = 424
	sysKill            = 129
	sysTkill           = 130
	sysTgkill          = 131
	sysPidfdOpen       = 434
	sysSocket          = 198
	sysSeccomp         = 277
)

const auditArch = 0xc00000b7 // AUDIT_ARCH_AARCH64

var archHostCalls []uintptr
