module github.com/zkrecipes/zkrecipes/observe/zkotel

go 1.25.0

require (
	github.com/zkrecipes/zkrecipes v0.0.0-00010101000000-000000000000
	go.opentelemetry.io/otel v1.44.0
	go.opentelemetry.io/otel/metric v1.44.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-zookeeper/zk v1.0.4 // indirect
	github.com/google/uuid v1.6.0 // indirect
)

// The adapter builds against the library beside it (also with GOWORK=off).
replace github.com/zkrecipes/zkrecipes => ../..
