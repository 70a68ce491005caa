//go:build unix && !linux

package lambdarun

import "syscall"

// procAttr puts a child in its own process group, so it can be stopped with everything it
// spawned. Only Linux can also tie the child's life to ours.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
