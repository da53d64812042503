module github.com/zkrecipes/zkrecipes/observe/zkprom

go 1.22

require (
	github.com/prometheus/client_golang v1.21.1
	github.com/zkrecipes/zkrecipes v0.0.0-00010101000000-000000000000
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-zookeeper/zk v1.0.4 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/client_model v0.6.1 // indirect
	github.com/prometheus/common v0.62.0 // indirect
	github.com/prometheus/procfs v0.15.1 // indirect
	golang.org/x/sys v0.28.0 // indirect
	google.golang.org/protobuf v1.36.1 // indirect
)

// The adapter builds against the library beside it (also with GOWORK=off).
replace github.com/zkrecipes/zkrecipes => ../..
