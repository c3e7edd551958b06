package hil

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ttlpapers/ttlpapers/internal/pereport"
	"github.com/ttlpapers/ttlpapers/internal/qemu"
	"github.com/ttlpapers/ttlpapers/spmd"
)

// Guest is what papersctl does as init (PID 1) in a machine Run booted: it
// mounts /dev, /proc and /sys, runs the configured papersctl command as PE
// pe of pes with the console as its output, reports the exit status on the
// console and powers the machine off. It returns only when it could not
// power off.
func Guest(pe, pes int) error {
	if os.Getpid() != 1 {
		return errors.New("hil: --guest is papersctl's role as init inside a hil machine, not a command to run by hand (use papersctl hil)")
	}
	x, err := guestRun(pe, pes)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hil guest:", err)
	}
	js, _ := json.Marshal(x) // ints and strings: it cannot fail
	fmt.Println(qemu.FormatData(exitResult, err == nil && x.Status == 0, string(js)))
	qemu.PowerOff()
	return nil
}

func guestRun(pe, pes int) (guestExit, error) {
	failed := guestExit{Status: -1}
	if err := qemu.Setup(); err != nil {
		return failed, err
	}
	js, err := os.ReadFile("/" + guestArgs)
	if err != nil {
		return failed, err
	}
	var args []string
	if err := json.Unmarshal(js, &args); err != nil {
		return failed, fmt.Errorf("hil: bad %s: %w", guestArgs, err)
	}
	// Wait until the host has seen every machine this far: past its BIOS,
	// which writes test patterns to the port that would look like a PE
	// taking part in barriers (see Run).
	qemu.Report(readyResult, nil, "")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return failed, fmt.Errorf("hil: waiting for the start signal on the console: %w", err)
	}
	cmd := exec.Command("/"+guestBinary, Substitute(args, pe, pes)...)
	_, statErr := os.Stat("/" + guestProgram)
	program := statErr == nil
	if program {
		if err := joinLAN(pe); err != nil {
			return failed, err
		}
		cmd = exec.Command("/"+guestProgram, Substitute(args, pe, pes)...)
		env, err := os.ReadFile("/" + guestEnv)
		if err != nil {
			return failed, err
		}
		cmd.Env = append(os.Environ(), strings.Fields(string(env))...)
		cmd.Env = append(cmd.Env, spmd.EnvPort+"=0x378", spmd.EnvPE+"="+strconv.Itoa(pe), spmd.EnvPEs+"="+strconv.Itoa(pes), pereport.Env+"=/"+guestReport)
	}
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if _, err := os.Stat("/" + guestInput); err == nil {
		cmd.Stdin = os.Stdin // the console, where the host types (Config.Input)
	}
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		x := guestExit{Status: exit.ExitCode()}
		if program {
			var rerr error
			if x.Report, rerr = pereport.Read("/" + guestReport); rerr != nil {
				fmt.Fprintln(os.Stderr, "hil guest:", rerr)
			}
		}
		name, _ := os.ReadFile("/" + guestName)
		return x, fmt.Errorf("%s: %w", name, err)
	}
	if err != nil {
		return failed, err
	}
	return guestExit{}, nil
}

// joinLAN loads the network card's driver and gives this machine its
// address on the LAN (LANAddr), and loopback its own.
func joinLAN(pe int) error {
	mods, _ := filepath.Glob("/lib/modules/" + lanModule + ".ko*") // compressed or not, as the kernel ships it
	if len(mods) == 0 {
		return fmt.Errorf("hil: no %s module in the initramfs", lanModule)
	}
	if err := qemu.LoadModule(mods[0], ""); err != nil {
		return err
	}
	if err := qemu.SetAddress("lo", netip.MustParsePrefix("127.0.0.1/8")); err != nil {
		return err
	}
	return qemu.SetAddress("eth0", LANAddr(pe))
}
