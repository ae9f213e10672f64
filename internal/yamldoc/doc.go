// Package yamldoc owns the YAML documents people write for oltplab (plan
// files, prices files): strict decoding into Go values, where a key that
// names no field, a value of the wrong type or a key given twice is an
// error naming the file, the line and the field's path
// (targets[1].io_limit.write_iops); and the reverse, Go values written as
// YAML under the same field names, for documents oltplab generates.
//
// It imports nothing of oltplab.
package yamldoc
