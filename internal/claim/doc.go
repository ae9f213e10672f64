// Package claim decides what oltplab may take, write and remove on this
// host's file systems when it runs as root: the data directories of
// managed instances, backups and their restored copies, fio's test files.
// What it takes or creates carries oltplab's mark; Remove takes only what
// carries the given mark, through no link and into no other mount.
//
// It imports nothing of oltplab.
package claim

// A path is resolved one component at a time from /, each directory held
// open while the next is looked up, so that what was checked is what is
// used. A symbolic link is followed only when it belongs to root or to
// oltplab's own user and sits in a directory nobody else may write; a
// directory on the way must belong to root, oltplab's user or a user the
// caller trusts (a managed server's account), and one other users may
// write must have the sticky bit, with the next component theirs no more
// than it is ours. System directories (/, /etc, /usr, /var/lib, /tmp, ...)
// are never taken, and nothing is written below /proc, /sys, /dev (but
// /dev/shm), /boot, /etc, /bin, /sbin, /lib* or /usr (but /usr/local).
//
// What oltplab takes as its own directory (Take) is a directory it
// creates, an empty one, or one it marked before: a mark file (MarkFile)
// holding a random id, written when the directory is taken. Directories
// oltplab creates for itself (backups, restored copies) are marked the same
// way, and files it creates carry the id in their name. Every file is
// created with O_EXCL and O_NOFOLLOW relative to its directory's
// descriptor, and every existing file opened with O_NOFOLLOW.
