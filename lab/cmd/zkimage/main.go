// Command zkimage builds the ZooKeeper image the container backend of
// testenv uses (zkrecipes/zookeeper:3.8-debian) unless it is already present,
// so that the first test run does not pay for it. -force rebuilds it.
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
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if *force && testenv.ImagePresent(ctx, testenv.DefaultImage) {
		if out, err := exec.CommandContext(ctx, "docker", "image", "rm", testenv.DefaultImage).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "zkimage: %v: %s\n", err, out)
			os.Exit(1)
		}
	}
	if err := testenv.EnsureImage(ctx, testenv.DefaultImage, logger); err != nil {
		fmt.Fprintln(os.Stderr, "zkimage:", err)
		os.Exit(1)
	}
	fmt.Println(testenv.DefaultImage, "is present")
}
