// Package rawconn owns the raw-syscall socket wrapper that the dialects
// put around their session connections (Wrap): reads and writes on the
// non-blocking descriptor without telling the Go scheduler they enter a
// system call, which saves the driver CPU on every round trip
// (rawconn_linux.go says why). Elsewhere Wrap returns the conn unchanged.
//
// It must not import any other oltplab package.
package rawconn
