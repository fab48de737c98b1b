//go:build js

package main

//bookgen:page-note each voter's Raft log is kept in memory in place of its raft.db (bolt needs mmap, which the page does not have); the certificates and snapshots are files of the page's in-memory file system
