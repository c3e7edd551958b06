// Package shmnet is the data network of a program whose PEs are processes
// on one machine (papersctl run, and MPI's ranks on one node): active
// messages (package am) through inboxes in memory every PE maps, a file
// under /dev/shm (Create, Open) or memory another library gives them
// (Init, Attach). A payload longer than am.MaxMedium is staged in a ring
// beside the inbox (am.Stager), and a PE's regions of one-sided memory
// (am.Direct) are memfds the others map. A PE's process that dies without
// leaving — SIGKILL — is seen by the others at their next look (its pid
// no longer exists), so a wait on it ends in a *am.GoneError naming it, as
// on the shared-memory board. It runs on Linux only.
package shmnet
