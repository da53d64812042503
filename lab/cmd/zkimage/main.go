// Command zkimage builds the ZooKeeper images the container backend of
// testenv uses, each unless it is already present, so that the first test
// run does not pay for them. Without flags it builds the default image
// (zkrecipes/zookeeper:3.8-debian, ZooKeeper 3.8.0 from Debian 12);
// -version builds one release of testenv.Versions ("3.9.6"), -all every
// one; -peers builds the images of the newer peer releases too (Curator
// 5.7.1 and kazoo 2.11.0 from Debian testing, peers.Testing). -force removes
// and rebuilds what it builds.
//
//	go run ./lab/cmd/zkimage -version 3.9.6
//	go run ./lab/cmd/zkimage -all -peers
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/zkrecipes/zkrecipes/lab/internal/peers"
	"github.com/zkrecipes/zkrecipes/testenv"
)

func main() {
	force := flag.Bool("force", false, "remove and rebuild the image even if it is present")
	version := flag.String("version", testenv.DefaultVersion, "the ZooKeeper release to build an image for")
	all := flag.Bool("all", false, "build the image of every release in testenv.Versions")
	withPeers := flag.Bool("peers", false, "build the peer releases' images too (lab/internal/peers)")
	list := flag.Bool("list", false, "list the releases, their Debian suites and images, and whether each is present")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))

	if *list {
		for _, z := range testenv.Versions {
			present := "missing"
			if testenv.ImagePresent(ctx, z.Image) {
				present = "present"
			}
			fmt.Printf("%-6s %-9s %-36s %s\n", z.Version, z.Suite, z.Image, present)
		}
		for _, r := range peers.Releases {
			if r.Image != "" {
				present := "missing"
				if testenv.ImagePresent(ctx, r.Image) {
					present = "present"
				}
				fmt.Printf("peers  %-9s %-36s %s (Curator %s, kazoo %s)\n", r.Suite, r.Image, present, r.Curator, r.Kazoo)
			}
		}
		return
	}
	var want []testenv.ZooKeeper
	if *all {
		want = testenv.Versions
	} else {
		z, err := testenv.LookupVersion(*version)
		if err != nil {
			fmt.Fprintln(os.Stderr, "zkimage:", err)
			os.Exit(2)
		}
		want = []testenv.ZooKeeper{z}
	}
	for _, z := range want {
		if *force && testenv.ImagePresent(ctx, z.Image) {
			if out, err := exec.CommandContext(ctx, "docker", "image", "rm", z.Image).CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "zkimage: %v: %s\n", err, out)
				os.Exit(1)
			}
		}
		if err := testenv.EnsureImage(ctx, z.Image, logger); err != nil {
			fmt.Fprintln(os.Stderr, "zkimage:", err)
			os.Exit(1)
		}
		fmt.Printf("%s (ZooKeeper %s, Debian %s) is present\n", z.Image, z.Version, z.Suite)
	}
	if !*withPeers {
		return
	}
	for _, r := range peers.Releases {
		if r.Image == "" {
			continue
		}
		if *force && testenv.ImagePresent(ctx, r.Image) {
			if out, err := exec.CommandContext(ctx, "docker", "image", "rm", r.Image).CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "zkimage: %v: %s\n", err, out)
				os.Exit(1)
			}
		}
		if err := r.EnsureImage(ctx, logger); err != nil {
			fmt.Fprintln(os.Stderr, "zkimage:", err)
			os.Exit(1)
		}
		fmt.Printf("%s (peers %s: Curator %s, kazoo %s, Debian %s) is present\n", r.Image, r.Name, r.Curator, r.Kazoo, r.Suite)
	}
}
