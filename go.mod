module github.com/ttlpapers/ttlpapers

go 1.26
