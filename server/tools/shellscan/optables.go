package shellscan

import "strings"

// The option tables of the programs on the built-in read-only list, from
// their manuals (GNU coreutils 9, grep 3, findutils 4.9, procps-ng 4,
// util-linux 2.39, iproute2 6, sysstat 12, systemd 255, iputils, bind9,
// kubectl and docker's own --help). See optTable for the notation.
//
// Programs not listed here take no options that matter (echo, true, false,
// test, [ and printf print or test their arguments: printf -v is refused by
// its pattern and the builtin check) or are checked by their own code
// (ip, find).
var optTables = map[string]*optTable{}

const help = " --help --version"

func init() {
	add := func(names string, t *optTable) {
		for _, n := range strings.Fields(names) {
			optTables[n] = t
		}
	}
	add("df", table("-a --all -B= --block-size= -h --human-readable -H --si -i --inodes -k -l --local --no-sync --output? -P --portability --sync --total -t= --type= -T --print-type -x= --exclude-type= -v"+help))
	add("du", table("-0 --null -a --all -A --apparent-size -B= --block-size= -b --bytes -c --total -D --dereference-args -d= --max-depth= --files0-from= -H -h --human-readable --inodes -k -L --dereference -l --count-links -m -P --no-dereference -S --separate-dirs --si -s --summarize -t= --threshold= --time? --time-style= -X= --exclude-from= --exclude= -x --one-file-system"+help))
	add("uptime", table("-c --container -p --pretty -r --raw -s --since -h --help -V --version"))
	add("free", table("-b --bytes -k --kilo -m --mega -g --giga --tera --peta --kibi --mebi --gibi --tebi --pebi -h --human --si -l --lohi -L --line -t --total -v --committed -w --wide -c= --count= -s= --seconds= --help -V --version"))
	// ps mixes UNIX options (-ef), BSD words (aux) and GNU long options;
	// none of them writes or runs anything.
	ps := table("-A -a -C= -c -d -e -F -f -G= -g= -H -j -L -l -M -m -N -n= -O= -o= -p= -q= -s= -T -t= -U= -u= -V -w -X -y -Z " +
		"--cols= --columns= --context --cumulative --deselect --forest --format= --group= --Group= --headers --header --info --lines= " +
		"--no-headers --no-header --noheaders --noheader --pid= --ppid= --quick-pid= --rows= --sid= --signames --sort= --tty= --user= --User= --width= --help? --version")
	ps.bsd = table("-a -c -e -f -h -j -L -l -m -n -r -S -s -T -u -v -V -w -x -X -Z -C -H -M -g -o= -O= -p= -q= -t= -U= -k=")
	ps.digits = true
	add("ps", ps)
	add("uname", table("-a --all -s --kernel-name -n --nodename -r --kernel-release -v --kernel-version -m --machine -p --processor -i --hardware-platform -o --operating-system"+help))
	add("hostname", table("-a --alias -A --all-fqdns -d --domain -f --fqdn --long -i --ip-address -I --all-ip-addresses -s --short -y --yp --nis -h --help -V --version"))
	add("whoami groups arch lsmod", table(help))
	add("printenv", table("-0 --null"+help))
	add("nproc", table("--all --ignore="+help))
	add("id", table("-a -Z --context -g --group -G --groups -n --name -r --real -u --user -z --zero"+help))
	add("w", table("-h --no-header -u --no-current -s --short -f --from -o --old-style -i --ip-addr -p --pids --help -V --version"))
	add("who", table("-a --all -b --boot -d --dead -H --heading --ips -l --login --lookup -m -p --process -q --count -r --runlevel -s --short -t --time -T -w --mesg --message --writable -u --users"+help))
	add("command", table("-p -v -V"))
	add("type", table("-a -f -P -p -t"))
	add("date", table("-d= --date= --debug -f= --file= -I? --iso-8601? --resolution -R --rfc-email --rfc-822 --rfc-2822 --rfc-3339= -r= --reference= -u --utc --universal -s=!s --set=!s"+help))
	add("lsblk", table("-A --noempty -a --all -b --bytes -d --nodeps -D --discard -E= --dedup= -e= --exclude= -f --fs -I= --include= -i --ascii -J --json -l --list -M --merge -m --perms -N --nvme -n --noheadings -o= --output= -O --output-all -p --paths -P --pairs -Q= --filter= -r --raw -S --scsi -s --inverse -T? --tree? -t --topology -v --virtio -w= --width= -x= --sort= -y --shell -z --zoned --sysroot= --ct= --ct-filter= --highlight= -H --list-columns --hyperlink? -h --help -V --version"))
	add("lscpu", table("-a --all -b --online -B --bytes -C? --caches? -c --offline -e? --extended? -J --json -p? --parse? -s= --sysroot= -x --hex -y --physical -r --raw --output-all --hierarchic? -h --help -V --version"))
	add("lsmem", table("-a --all -b --bytes -J --json -n --noheadings -o= --output= --output-all -P --pairs -r --raw -S= --split= -s= --sysroot= --summary? -h --help -V --version"))
	add("lspci", table("-m -t -v -k -x -b -D -P -n -q -Q -M -J -A= -H= -F= -i= -p= -s= -d= -O="+help))
	add("lsusb", table("-v --verbose -s= -d= -D= -t --tree -V --version -h --help"))
	add("findmnt", table("-A --all -a --ascii -b --bytes -C --nocanonicalize -c --canonicalize -D --df -d= --direction= -e --evaluate -F= --tab-file= -f --first-only -I --dfi -i --invert -J --json -k --kernel? -l --list -M= --mountpoint= -m --mtab -N= --task= -n --noheadings -O= --options= -o= --output= --output-all -P --pairs -p? --poll? -Q= --filter= -R --submounts -r --raw --real --pseudo -S= --source= -s --fstab -T= --target= -t= --types= -U --uniq -u --notruncate -v --nofsroot -w= --timeout= -x --verify --verbose -y --shell --vfs-all --list-columns -H --hyperlink? --id= --uniq-id= -h --help -V --version"))
	add("vmstat", table("-a --active -f --forks -m --slabs -n --one-header -s --stats -d --disk -D --disk-sum -p= --partition= -S= --unit= -t --timestamp -w --wide -y --no-first -h --help -V --version"))
	add("iostat", table("-c -d -f= -g= -H -h -j= -k -m -N -o= -p= -s -t -V -x -y -z --compact --dec= --human --pretty --debuginfo"))
	add("mpstat", table("-A -H -h -I= -N= -n -o= -P= -T -u -V --dec="))
	add("pidstat", table("-d -H -h -I -l -R -r -s -t -U? -u -V -v -w -C= -G= -p= -T= --dec= --human -e=!x"))
	add("top", table("-b -c -d= -E= -e= -H -h -i -n= -O -o= -p= -S -s -U= -u= -V -w? -1 -v").with(func(t *optTable) { t.digits = true }))
	add("cat", table("-A --show-all -b --number-nonblank -e -E --show-ends -n --number -s --squeeze-blank -t -T --show-tabs -u -v --show-nonprinting"+help))
	add("head", table("-c= --bytes= -n= --lines= -q --quiet --silent -v --verbose -z --zero-terminated"+help).with(func(t *optTable) { t.digits = true }))
	add("tail", table("-c= --bytes= -f --follow? -F -n= --lines= --max-unchanged-stats= --pid= -q --quiet --silent --retry -s= --sleep-interval= -v --verbose -z --zero-terminated --debug"+help).with(func(t *optTable) { t.digits = true }))
	add("wc", table("-c --bytes -m --chars -l --lines --files0-from= -L --max-line-length -w --words --total= --debug"+help))
	add("grep egrep fgrep zgrep", table("-E --extended-regexp -F --fixed-strings -G --basic-regexp -P --perl-regexp -e= --regexp= -f= --file= -i -y --ignore-case --no-ignore-case -v --invert-match -w --word-regexp -x --line-regexp -c --count --color? --colour? -L --files-without-match -l --files-with-matches -m= --max-count= -o --only-matching -q --quiet --silent -s --no-messages -b --byte-offset -H --with-filename -h --no-filename --label= -n --line-number -T --initial-tab -Z --null -z --null-data -A= --after-context= -B= --before-context= -C= --context= -a --text --binary-files= -D= --devices= -d= --directories= --exclude= --exclude-from= --exclude-dir= -I --include= -r --recursive -R --dereference-recursive --line-buffered -U --binary --no-group-separator --group-separator= -V --version --help").with(func(t *optTable) { t.digits = true }))
	add("rg", table("-A= --after-context= -B= --before-context= -C= --context= -a --text -b --byte-offset -c --count --count-matches --color= --colors= --column --no-column -e= --regexp= -E= --encoding= -f= --file= -F --fixed-strings --files --files-with-matches -l --files-without-match -g= --glob= --iglob= -H --with-filename --no-filename -I --heading --no-heading --hidden -. -i --ignore-case -j= --threads= --json -L --follow -M= --max-columns= -m= --max-count= --max-depth= -d= --max-filesize= --multiline -U --no-ignore --no-ignore-vcs --no-ignore-dot --no-ignore-global --no-ignore-parent --no-messages -n --line-number -N --no-line-number -o --only-matching -p --pretty -P --pcre2 -q --quiet -r= --replace= -s --case-sensitive -S --smart-case --sort= --sortr= --stats -t= --type= -T= --type-not= --type-list -u --unrestricted -v --invert-match -w --word-regexp -x --line-regexp --vimgrep -0 --null -z --search-zip --trim --no-config --debug --trace --passthru --line-buffered --block-buffered --max-columns-preview --no-require-git --glob-case-insensitive --ignore-file= --engine= --include-zero --hyperlink-format= --null-data --crlf --one-file-system --files-without-match -h --help -V --version --pre=!x --pre-glob=!x"))
	add("ls", table("-a --all -A --almost-all --author -b --escape --block-size= -B --ignore-backups -c -C --color? -d --directory -D --dired -f -F --classify? --file-type --format= --full-time -g --group-directories-first -G --no-group -h --human-readable --si -H --dereference-command-line --dereference-command-line-symlink-to-dir --hide= --hyperlink? --indicator-style= -i --inode -I= --ignore= -k --kibibytes -l -L --dereference -m -n --numeric-uid-gid -N --literal -o -p -q --hide-control-chars --show-control-chars -Q --quote-name --quoting-style= -r --reverse -R --recursive -s --size -S --sort= --time= --time-style= -t -T= --tabsize= -u -U -v -w= --width= -x -X -Z --context --zero -1"+help))
	add("stat", table("-L --dereference -f --file-system -c= --format= --printf= -t --terse --cached="+help))
	add("pwd", table("-L --logical -P --physical"+help))
	add("sleep", table(help))
	add("which", table("-a --all -s -i --read-alias --skip-alias --read-functions --skip-functions --skip-dot --skip-tilde --show-dot --show-tilde --tty-only -v -V --version --help"))
	add("basename", table("-a --multiple -s= --suffix= -z --zero"+help))
	add("dirname", table("-z --zero"+help))
	add("realpath", table("-e --canonicalize-existing -m --canonicalize-missing -L --logical -P --physical -q --quiet --relative-to= --relative-base= -s --strip --no-symlinks -z --zero"+help))
	add("readlink", table("-f --canonicalize -e --canonicalize-existing -m --canonicalize-missing -n --no-newline -q --quiet -s --silent -v --verbose -z --zero"+help))
	add("md5sum sha1sum sha256sum", table("-b --binary -c --check --tag -t --text -z --zero --ignore-missing --quiet --status --strict -w --warn"+help))
	add("cut", table("-b= --bytes= -c= --characters= -d= --delimiter= -f= --fields= -n --complement -s --only-delimited --output-delimiter= -z --zero-terminated"+help))
	add("tr", table("-c -C --complement -d --delete -s --squeeze-repeats -t --truncate-set1"+help))
	add("column", table("-t --table -c= --output-width= -s= --separator= -o= --output-separator= -x --fillrows -N= --table-columns= -l= --table-columns-limit= -R= --table-right= -T= --table-truncate= -E= --table-noextreme= -W= --table-wrap= -H= --table-hide= -O= --table-order= -n= --table-name= -J --json -r= --tree= -i= --tree-id= -p= --tree-parent= -L --keep-empty-lines -e --table-header-repeat -d --table-noheadings -m --table-maxout -h --help -V --version"))
	add("diff", table("--normal -q --brief -s --report-identical-files -c -C= --context? -u -U= --unified? -e --ed -n --rcs -y --side-by-side -W= --width= --left-column --suppress-common-lines -p --show-c-function -F= --show-function-line= --label= -t --expand-tabs -T --initial-tab --tabsize= --suppress-blank-empty -l --paginate -r --recursive --no-dereference -N --new-file --unidirectional-new-file --ignore-file-name-case --no-ignore-file-name-case -x= --exclude= -X= --exclude-from= -S= --starting-file= --from-file= --to-file= -i --ignore-case -E --ignore-tab-expansion -Z --ignore-trailing-space -b --ignore-space-change -w --ignore-all-space -B --ignore-blank-lines -I= --ignore-matching-lines= -a --text --strip-trailing-cr -D= --ifdef= --GTYPE-group-format= --old-group-format= --new-group-format= --changed-group-format= --unchanged-group-format= --line-format= --old-line-format= --new-line-format= --unchanged-line-format= -d --minimal --horizon-lines= --speed-large-files --color? --palette="+help).with(func(t *optTable) { t.digits = true }))
	add("cmp", table("-b --print-bytes -i= --ignore-initial= -l --verbose -n= --bytes= -s --quiet --silent"+help))
	// tree -o writes its listing to a file; -R re-runs tree with -o
	// 00Tree.html in every directory.
	add("tree", table("-a -d -l -f -x -L= -R!w -P= -I= --gitignore --gitfile= --ignore-case --matchdirs --metafirst --prune --info --infofile= --noreport --charset= --filelimit= -o=!w -q -N -Q -p -u -g -s -h --si --du -D --timefmt= -F --inodes --device -v -t -c -U -r --dirsfirst --filesfirst --sort= -i -A -S -n -C -X -J -H= -T= --nolinks --hintro= --houtro= --fromfile --fromtabfile --fflinks"+help))
	// jq has no option that writes or runs a program; --arg and friends
	// take a name and a value.
	add("jq", table("-n --null-input -R --raw-input -s --slurp -c --compact-output -r --raw-output --raw-output0 -j --join-output -a --ascii-output -S --sort-keys -C --color-output -M --monochrome-output --tab --indent= --unbuffered --stream --stream-errors --seq -f= --from-file= -L= -e --exit-status --arg== --argjson== --slurpfile== --rawfile== --args --jsonargs -h --help -V --version --build-configuration"))
	// sort -o writes its output to a file, --compress-program runs one, and
	// -T fills a directory of the caller's choosing with temporary files.
	add("sort", table("-b --ignore-leading-blanks -d --dictionary-order -f --ignore-case -g --general-numeric-sort -i --ignore-nonprinting -M --month-sort -h --human-numeric-sort -n --numeric-sort -R --random-sort --random-source= -r --reverse --sort= -V --version-sort --batch-size= -c --check? -C --debug --files0-from= -k= --key= -m --merge -o=!w --output=!w -s --stable -S= --buffer-size= -t= --field-separator= -T=!w --temporary-directory=!w --parallel= -u --unique -z --zero-terminated --compress-program=!x"+help))
	add("getent", table("-s= --service= -i --no-idn -A --no-addrconfig --help --usage -V --version"))
	// ss -K closes the sockets it lists; -D writes raw socket data to a file.
	add("ss", table("-h --help -V --version -H --no-header -O --oneline -n --numeric -r --resolve -a --all -l --listening -o --options -e --extended -m --memory -p --processes -T --threads -i --info --tos --cgroup --tipcinfo -s --summary -E --events -Z --context -z --contexts -N= --net= -b --bpf -4 --ipv4 -6 --ipv6 -0 --packet -t --tcp -M --mptcp -S --sctp -u --udp -d --dccp -w --raw -x --unix --tipc --vsock -f= --family= -A= --query= --socket= -F= --filter= -X --xdp --inet-sockets --bpf-maps --bpf-map-id= -K!c --kill!c -D=!w --diag=!w"))
	add("netstat", table("-r --route -i --interfaces -g --groups -M --masquerade -s --statistics -a --all -l --listening -n --numeric --numeric-hosts --numeric-ports --numeric-users -N --symbolic -e --extend -p --program -c --continuous -C --cache -F --fib -o --timers -t --tcp -u --udp -U --udplite -S --sctp -w --raw -x --unix -W --wide -v --verbose -Z --context -4 -6 -A= --protocol= --inet --inet6 -h --help -V --version"))
	// dig: +query options change only the query and its display; they are
	// operands to this reading.
	add("dig", table("-4 -6 -b= -c= -f= -h -k= -m -p= -q= -r -t= -u -v -x= -y="))
	add("nslookup", table("-all -class= -debug -nodebug -d2 -nod2 -domain= -search -nosearch -port= -querytype= -query= -type= -recurse -norecurse -retry= -timeout= -vc -novc -fail -nofail -ndots= -ignoretc -noignoretc -defname -nodefname -sil -silent -version").with(func(t *optTable) { t.dashLong = true }))
	add("host", table("-a -A -C -c= -d -l -i -N= -r -R= -s -t= -T -U -v -V -w -W= -4 -6 -m= -y="))
	add("ping", table("-3 -4 -6 -a -A -b -B -c= -C -d -D -e= -f -F= -h -H -i= -I= -l= -L -m= -M= -n -O -p= -q -Q= -r -R -s= -S= -t= -T= -U -v -V -w= -W="))
	// dmesg -c and -C clear the kernel's ring buffer; -D, -E and -n change
	// what reaches the console.
	add("dmesg", table("-C!c --clear!c -c!c --read-clear!c -D!c --console-off!c -E!c --console-on!c -n=!c --console-level=!c -d --show-delta -e --reltime -F= --file= -f= --facility= -H --human -J --json -k --kernel -L? --color? -l= --level= -P --nopager -p --force-prefix -r --raw -S --syslog -s= --buffer-size= -T --ctime -t --notime --time-format= -u --userspace -w --follow -W --follow-new -x --decode --since= --until= -h --help -V --version"))
	add("journalctl", table("--system --user -M= --machine= -m --merge -D= --directory= -i= --file= --root= --image= --image-policy= --namespace= -S= --since= -U= --until= -c= --cursor= --after-cursor= --cursor-file= -b? --boot? -u= --unit= --user-unit= -t= --identifier= -T= --exclude-identifier= -p= --priority= --facility= -g= --grep= --case-sensitive? -k --dmesg -o= --output= --output-fields= -n? --lines? -r --reverse --show-cursor --utc -x --catalog --no-hostname --no-full --full -l -a --all -f --follow --no-tail -q --quiet --no-pager -e --pager-end --list-boots --disk-usage --fields -F= --field= --header --list-catalog --dump-catalog --list-namespaces --verify --verify-key= --truncate-newline --interval= --force -N -h --help --version "+
		"--vacuum-size=!w --vacuum-time=!w --vacuum-files=!w --rotate!w --flush!w --sync!w --relinquish-var!w --smart-relinquish-var!w --setup-keys!w --update-catalog!w").with(func(t *optTable) { t.digits = true }))
	add("systemctl", table("-t= --type= --state= -p= --property= -P= -a --all -r --recursive --reverse --after --before --with-dependencies -l --full --value --show-types --job-mode= -T --show-transaction -i --ignore-inhibitors --check-inhibitors= -q --quiet --no-warn --wait --no-block --user --system --failed --no-wall --global --no-reload --no-ask-password --kill-whom= --kill-value= -s= --signal= -f --force --message= --now --root= --image= --image-policy= --runtime --preset-mode= -n= --lines= -o= --output= --firmware-setup --boot-loader-menu= --boot-loader-entry= --reboot-argument= --plain --timestamp= --mkdir --marked --read-only --no-pager --no-legend -H= --host= -M= --machine= --legend= -h --help --version"))
	add("timedatectl hostnamectl", table("-H= --host= -M= --machine= --no-ask-password --no-pager --adjust-system-clock --monitor -a --all -p= --property= -P= --value --static --transient --pretty --json= -j -h --help --version"))
	add("loginctl", table("--no-pager --no-legend --no-ask-password -H= --host= -M= --machine= -a --all -p= --property= -P= --value -l --full -n= --lines= -o= --output= -j --json= -h --help --version"))
	// kubectl's global options and those of its reading verbs.
	// --kubeconfig (like KUBECONFIG) can name credential plugins to run.
	add("kubectl", table("-n= --namespace= -A --all-namespaces --context= --cluster= --user= -s= --server= --request-timeout= --insecure-skip-tls-verify --certificate-authority= --client-certificate= --client-key= --token= --as= --as-group= --as-uid= --tls-server-name= --match-server-version --cache-dir= --disable-compression --warnings-as-errors --profile= --profile-output= -v= --v= "+
		"-o= --output= -l= --selector= --field-selector= -w --watch --watch-only --output-watch-events --chunk-size= --show-labels --show-kind --show-managed-fields --no-headers --sort-by= -L= --label-columns= --ignore-not-found --server-print --template= --allow-missing-template-keys --raw= -f= --filename= -R --recursive -k= --kustomize= --subresource= "+
		"-c= --container= --all-containers --all-pods -p --previous --since= --since-time= --tail= --timestamps --prefix --limit-bytes= --max-log-requests= --pod-running-timeout= --ignore-errors --insecure-skip-tls-verify-backend "+
		"--containers --use-protocol-buffers --sum --no-headers --revision= --timeout= --types= --for-object= --api-group= --namespaced --verbs= --cached --recursive --client --short --api-version= -h --help --kubeconfig=!x"))
	add("docker", table("-a --all -f= --filter= --format= -n= --last= -l --latest --no-trunc -q --quiet -s --size --digests --tree --details --follow --since= --until= -t --timestamps --tail= -n= --type= --no-stream --no-trunc -D --debug -H= --host= -l= --log-level= --context= -c= --tls --tlsverify --tlscacert= --tlscert= --tlskey= -h --help -v --version --config=!x"))
	add("crontab", table("-l -u="))
	add("lsof", table("-a -b -C -h -K -l -n -N -O -P -R -t -U -v -V -w -X -x? -A= -c= -d= -D= -e= -F? -g? -i? -k= -L? -m= -o? -p= -r? -s? -S? -T? -u= -z? -Z? +c= +d= +D= +f? +L? +m? +r? +w").with(func(t *optTable) { t.plus = true }))
	add("mount", table("-l --show-labels -t= --types= -h --help -V --version"))
	add("ulimit", table("-a -S -H"))
}

func init() {
	optTables["env"] = table("-i --ignore-environment -0 --null -u= --unset= -C= --chdir= -S= --split-string= -v --debug --block-signal? --default-signal? --ignore-signal? --list-signal-handling" + help)
}
