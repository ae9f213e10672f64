//go:build !linux

package postgres

import "net"

// rawDialed returns c: raw reads and writes (rawconn_linux.go) are made on
// Linux only.
func rawDialed(c net.Conn) net.Conn { return c }
