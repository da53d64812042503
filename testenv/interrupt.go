package testenv

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// While any ensemble made by New is open, an interrupt (SIGINT, SIGTERM) of
// the test binary closes every such ensemble before the process dies, so an
// interrupted `go test` leaves no container, network or JVM behind. The
// watcher goroutine exists only while such ensembles are open. (A binary
// killed outright, or a test timeout's panic, still leaves them: the next
// Start reaps those.)
var interrupts struct {
	mu   sync.Mutex
	live map[*Ensemble]struct{}
	stop chan struct{}
	done chan struct{}
}

func closeOnInterrupt(e *Ensemble) {
	interrupts.mu.Lock()
	defer interrupts.mu.Unlock()
	if interrupts.live == nil {
		interrupts.live = make(map[*Ensemble]struct{})
	}
	interrupts.live[e] = struct{}{}
	if interrupts.stop != nil {
		return
	}
	stop, done := make(chan struct{}), make(chan struct{})
	interrupts.stop, interrupts.done = stop, done
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		defer close(done)
		defer signal.Stop(sig)
		select {
		case <-stop:
		case s := <-sig:
			interrupts.mu.Lock()
			var open []*Ensemble
			for e := range interrupts.live {
				open = append(open, e)
			}
			interrupts.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			for _, e := range open {
				_ = e.Close(ctx)
			}
			cancel()
			signal.Stop(sig)
			if ss, ok := s.(syscall.Signal); ok {
				_ = syscall.Kill(os.Getpid(), ss) // die of it, as without us
			}
			os.Exit(130)
		}
	}()
}

// forgetOnInterrupt drops a closed ensemble; the last one stops the watcher.
func forgetOnInterrupt(e *Ensemble) {
	interrupts.mu.Lock()
	delete(interrupts.live, e)
	var stop, done chan struct{}
	if len(interrupts.live) == 0 && interrupts.stop != nil {
		stop, done = interrupts.stop, interrupts.done
		interrupts.stop, interrupts.done = nil, nil
	}
	interrupts.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}
