module github.com/ttlpapers/ttlpapers

go 1.26.0

require (
	github.com/hanwen/go-fuse/v2 v2.8.0
	golang.org/x/sys v0.49.0
	periph.io/x/conn/v3 v3.7.3
	periph.io/x/host/v3 v3.8.5
)

require github.com/jonboulle/clockwork v0.5.0 // indirect
