package childproc

import "syscall"

// SysProcAttr puts a child in its own process group, so it can be stopped with everything it
// spawned, and has the kernel kill it should this process die without stopping it.
func SysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
