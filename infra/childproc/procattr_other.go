//go:build unix && !linux

package childproc

import "syscall"

// SysProcAttr puts a child in its own process group, so it can be stopped with everything it
// spawned. Only Linux can also tie the child's life to ours.
func SysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
