// Package twophase will hold a two-phase commit (Coordinator and
// Participant) with one durable decision node, tolerant of coordinator and
// participant failure. Nothing is implemented yet.
package twophase
