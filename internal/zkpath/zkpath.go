// Package zkpath joins and splits ZooKeeper paths for the recipes of this
// module. Pure; the rules of a valid path are recipes.ValidatePath's.
package zkpath

import "strings"

// Join joins a parent path and a child name.
func Join(parent, child string) string {
	if parent == "/" {
		return "/" + child
	}
	return parent + "/" + child
}

// Split returns the parent and the last segment of a valid path; the
// root's parent is "/" and its name is "".
func Split(p string) (parent, name string) {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/", p[min(len(p), 1):]
	}
	return p[:i], p[i+1:]
}
