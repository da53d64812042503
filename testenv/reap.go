package testenv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
)

// dockerAnswers reports whether a Docker engine answers within 5 s.
func dockerAnswers(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, "docker", "version", "--format", "{{.Server.Version}}").Run() == nil
}

var setupOnce sync.Once

// setupTestcontainers prepares testcontainers-go once per process, before it
// reads its configuration: its reaper container (Ryuk) is turned off when its
// image is not present (it cannot be pulled here, and testenv removes its own
// containers, and Reap those of crashed runs), and its chatty log goes to
// slog's default logger at debug level.
func setupTestcontainers() {
	setupOnce.Do(func() {
		tclog.SetDefault(debugLogger{})
		if os.Getenv("TESTCONTAINERS_RYUK_DISABLED") != "" {
			return
		}
		out, err := exec.Command("docker", "image", "ls", "-q", "testcontainers/ryuk").Output()
		if err != nil || strings.TrimSpace(string(out)) == "" {
			os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
		}
	})
}

type debugLogger struct{}

func (debugLogger) Printf(format string, v ...any) {
	slog.Debug("testcontainers: " + strings.TrimSpace(fmt.Sprintf(format, v...)))
}

// ownerGone reports whether the process named by an owner label
// ("host:pid") on this host has exited.
func ownerGone(owner string) bool {
	host, pidStr, ok := strings.Cut(owner, ":")
	me, _ := os.Hostname()
	if !ok || host != me {
		return false
	}
	pid, err := strconv.Atoi(pidStr)
	if err != nil || pid <= 0 {
		return false
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// Reap removes what ensembles of exited processes on this host left behind:
// containers and networks labelled by testenv, and JVMs and directories of the
// processes backend. Start calls it; it is safe to call at any time, never
// touches the resources of a live process, and logs what it removed.
func Reap(ctx context.Context, logger *slog.Logger) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	reapProcesses(logger)
	if !dockerAnswers(ctx) {
		return
	}
	setupTestcontainers()
	p, err := testcontainers.NewDockerProvider()
	if err != nil {
		return
	}
	cli := p.Client()
	f := client.Filters{}.Add("label", labelTestenv+"=1")
	ctrs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err == nil {
		for _, c := range ctrs.Items {
			if ownerGone(c.Labels[labelOwner]) {
				_, _ = cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
				logger.Info("testenv: reaped container", "names", c.Names)
			}
		}
	}
	nets, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err == nil {
		for _, n := range nets.Items {
			if ownerGone(n.Labels[labelOwner]) {
				_, _ = cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{})
				logger.Info("testenv: reaped network", "name", n.Name)
			}
		}
	}
}

// reapProcesses kills the JVMs of processes-backend ensembles whose owner
// exited and removes their directories.
func reapProcesses(logger *slog.Logger) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), processDirPrefix+"*"))
	for _, dir := range dirs {
		owner, err := os.ReadFile(filepath.Join(dir, "owner"))
		if err != nil || !ownerGone(strings.TrimSpace(string(owner))) {
			continue
		}
		pids, _ := filepath.Glob(filepath.Join(dir, "zk*", "pid"))
		for _, pf := range pids {
			b, _ := os.ReadFile(pf)
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 && isJava(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		_ = os.RemoveAll(dir)
		logger.Info("testenv: reaped process ensemble", "dir", dir)
	}
}

// isJava reports whether pid is a live java process (so a recycled pid of
// something else is never killed).
func isJava(pid int) bool {
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	return err == nil && strings.Contains(filepath.Base(exe), "java")
}
