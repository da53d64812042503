// Command zkimage builds the ZooKeeper images the container backend of
// testenv uses, each unless it is already present, so that the first test
// run does not pay for them. Without flags it builds the default image
// (zkrecipes/zookeeper:3.8-debian, ZooKeeper 3.8.0 from Debian 12);
// -version builds one release of testenv.Versions ("3.9.6"), -all every
// one. -force removes and rebuilds what it builds.
//
//	go run ./lab/cmd/zkimage -version 3.9.6
//	go run ./lab/cmd/zkimage -all
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

	"github.com/zkrecipes/zkrecipes/lab/testenv"
)

func main() {
	force := flag.Bool("force", false, "remove and rebuild the image even if it is present")
	version := flag.String("version", testenv.DefaultVersion, "the ZooKeeper release to build an image for")
	all := flag.Bool("all", false, "build the image of every release in testenv.Versions")
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
}
