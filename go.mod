module github.com/zkrecipes/zkrecipes

go 1.22

require (
	github.com/go-zookeeper/zk v1.0.4
	github.com/google/uuid v1.6.0
)
