// Package queue will hold a FIFO queue of persistent sequential qn- nodes
// (ZooKeeper's queue recipe, Curator's SimpleDistributedQueue), a priority
// queue, and claim/ack consumption for at-least-once processing. Nothing is
// implemented yet.
package queue
