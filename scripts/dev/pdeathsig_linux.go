package main

import (
	"os"
	"syscall"
)

// dieWithParent asks the kernel to send SIGTERM when the parent process dies.
func dieWithParent() {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0)
	if os.Getppid() == 1 { // the parent died before the call
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
	}
}
