// Command lanprog is an SPMD program for hil's test of the machines' LAN:
// every PE listens on its LAN address, and after a barrier each PE
// connects to every other and exchanges a line with it over TCP.
package main

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/ttlpapers/ttlpapers/hil"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/spmd"
)

const port = 7031

func main() { spmd.Main(run) }

func addr(k int) string {
	return net.JoinHostPort(hil.LANAddr(k).Addr().String(), strconv.Itoa(port))
}

func run(p *papers.PE) error {
	ln, err := net.Listen("tcp", addr(p.Self()))
	if err != nil {
		return err
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				line, _ := bufio.NewReader(c).ReadString('\n')
				fmt.Fprintf(c, "PE %d got %s", p.Self(), line)
			}()
		}
	}()
	if err := p.Barrier(); err != nil { // every PE listens
		return err
	}
	for k := range p.PEs() {
		if k == p.Self() {
			continue
		}
		c, err := net.DialTimeout("tcp", addr(k), 10*time.Second)
		if err != nil {
			return err
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(c, "hello from PE %d\n", p.Self())
		reply, err := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if err != nil {
			return fmt.Errorf("PE %d: %w", k, err)
		}
		fmt.Print("lan: ", reply)
	}
	return p.Barrier() // every PE answered every other
}
