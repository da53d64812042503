package testenv

import (
	"bufio"
	"context"
	_ "embed"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

//go:embed image.sh
var imageScript string

var imageMu sync.Mutex

// ImagePresent reports whether the Docker engine has image.
func ImagePresent(ctx context.Context, image string) bool {
	return exec.CommandContext(ctx, "docker", "image", "inspect", "--format", "{{.Id}}", image).Run() == nil
}

// EnsureImage makes sure the Docker engine has image. An image other than
// DefaultImage must already be present (testenv never pulls: registries may
// be out of reach). DefaultImage is built when missing, once per machine and
// cached by its tag: a Debian bookworm root filesystem made with debootstrap
// (minbase) from Debian's packages, with openjdk-17-jre-headless,
// libzookeeper-java (ZooKeeper 3.8), iptables and procps, loaded with docker
// import. Building needs root, debootstrap (installed with apt-get when
// missing and running as root) and a Debian mirror; it takes a minute or
// two and logs a line per step.
func EnsureImage(ctx context.Context, image string, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	imageMu.Lock()
	defer imageMu.Unlock()
	if ImagePresent(ctx, image) {
		return nil
	}
	if image != DefaultImage {
		return fmt.Errorf("%w: image %s is not present and testenv builds only %s", ErrImage, image, DefaultImage)
	}
	return buildImage(ctx, image, logger)
}

func buildImage(ctx context.Context, image string, logger *slog.Logger) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: building %s needs root (debootstrap, chroot)", ErrImage, image)
	}
	if _, err := exec.LookPath("debootstrap"); err != nil {
		logger.Info("testenv: installing debootstrap")
		if out, err := exec.CommandContext(ctx, "apt-get", "install", "-y", "-q", "debootstrap").CombinedOutput(); err != nil {
			return fmt.Errorf("%w: install debootstrap: %v\n%s", ErrImage, err, tail(string(out), 20))
		}
	}
	script, err := os.CreateTemp("", "zkrecipes-image-*.sh")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrImage, err)
	}
	defer os.Remove(script.Name())
	if _, err := script.WriteString(imageScript); err != nil {
		return fmt.Errorf("%w: %v", ErrImage, err)
	}
	script.Close()

	began := time.Now()
	logger.Info("testenv: building image (once per machine)", "image", image)
	cmd := exec.CommandContext(ctx, "/bin/sh", script.Name(), image)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrImage, err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%w: %v", ErrImage, err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		logger.Info("testenv: " + sc.Text())
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("%w: %v\n%s", ErrImage, err, tail(stderr.String(), 30))
	}
	logger.Info("testenv: image built", "image", image, "took", time.Since(began).Round(time.Second))
	return nil
}
