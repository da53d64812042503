package chaos

import (
	"path/filepath"
	"regexp"
	"strings"
)

// CommandLine renders args (os.Args) as the command a person typed, for the
// report. A binary that `go run` built lives in a temporary
// ".../go-build<N>/.../exe/<name>" directory or, since Go 1.24, in the
// build cache (goCache: "<GOCACHE>/<xx>/<hash>-d/<name>"), and means
// nothing to a reader; it is shown as "go run ./<package>", the package
// being pkgPath relative to modulePath (as runtime/debug.BuildInfo gives
// them: Path and Main.Path). Any other binary is shown as invoked.
// Arguments are quoted for a POSIX shell where needed.
func CommandLine(args []string, pkgPath, modulePath, goCache string) string {
	if len(args) == 0 {
		return ""
	}
	out := make([]string, 0, len(args)+1)
	if pkg, ok := goRunPackage(args[0], pkgPath, modulePath, goCache); ok {
		out = append(out, "go", "run", pkg)
	} else {
		out = append(out, shellQuote(args[0]))
	}
	for _, a := range args[1:] {
		out = append(out, shellQuote(a))
	}
	return strings.Join(out, " ")
}

// goRunPackage reports whether exe is a binary built by go run, and the
// package to name instead.
func goRunPackage(exe, pkgPath, modulePath, goCache string) (string, bool) {
	dir := filepath.Dir(exe)
	tmp := filepath.Base(dir) == "exe" && strings.Contains("/"+filepath.ToSlash(dir)+"/", "/go-build")
	cached := goCache != "" && filepath.Dir(filepath.Dir(dir)) == filepath.Clean(goCache) && cacheEntry.MatchString(filepath.Base(dir))
	if !tmp && !cached {
		return "", false
	}
	rel, ok := strings.CutPrefix(pkgPath, modulePath+"/")
	if modulePath == "" || !ok || rel == "" {
		return "", false
	}
	return "./" + rel, true
}

// cacheEntry is the name of a build cache directory holding a go run binary.
var cacheEntry = regexp.MustCompile(`^[0-9a-f]{64}-d$`)

// shellQuote quotes s for a POSIX shell unless it is plain.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,@+%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// RedactArgs returns a copy of args with the password of a -digest
// user:password argument ("-digest v", "-digest=v", with one or two dashes)
// replaced by [REDACTED], so that the command line shown in the report
// carries no secret.
func RedactArgs(args []string) []string {
	out := append([]string(nil), args...)
	redact := func(v string) string {
		if user, _, ok := strings.Cut(v, ":"); ok {
			return user + ":[REDACTED]"
		}
		return "[REDACTED]"
	}
	for i := 1; i < len(out); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(out[i], "-"), "=")
		if !strings.HasPrefix(out[i], "-") || name != "digest" {
			continue
		}
		if hasValue {
			out[i] = out[i][:len(out[i])-len(value)] + redact(value)
		} else if i+1 < len(out) {
			out[i+1] = redact(out[i+1])
			i++
		}
	}
	return out
}
