package subcommands

import (
	"cmp"
	"flag"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentfs/agentfs/assets/localdir"
	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/urfave/cli/v2"
)

// A globalFlag is declared as data, from which its urfave/cli flag, its
// check and the man page test are derived.
type globalFlag struct {
	name  string
	alias string // a one-letter spelling, "" for none
	env   string // the environment variable, "" for none
	kind  flagKind
	// def, min and max are in the flag's own spelling (30s, 262144); enum
	// is its closed set of values.
	def, min, max string
	enum          []string
	// valid, when set, refuses a string value outside the flag's set,
	// naming the flag or the variable (name) that gave it.
	valid func(name, value string) *fault.Error
	usage string
	// usedBy, when set, names what uses a setting that not every command
	// does: commands (publish, serve; publish is also a tool of batch and
	// mcp) or useStore, an object store wherever one is opened. Its
	// variable is checked there (checkUsed), before the setting is used,
	// not by every command: AGENTFS_S3_IDLE_TIMEOUT=0 or
	// AGENTFS_PUBLISH_MAX_SIZE=abc, left in a shell for another command,
	// made a purely local read INVALID_ARGUMENT. Until then a variable
	// that is not of the flag's kind is left out of parsing (flag), the
	// default kept, whatever the kind.
	usedBy []string
}

// useStore is what uses an S3 setting: an object store (an s3:// root,
// publish to s3://), opened by any command.
const useStore = "s3://"

type flagKind int

const (
	kindBool flagKind = iota
	kindString
	kindStrings // repeatable
	kindInt
	kindDuration
)

// globals are the global flags, in the order of --help. They are accepted
// before the subcommand and, hoisted by reorderArgs, after it too.
var globals = []globalFlag{
	{name: "root", env: "AGENTFS_ROOT", kind: kindStrings, usage: "allowed root directory, or one s3://bucket/prefix (repeatable; default: the current directory)"},
	{name: "deny", env: "AGENTFS_DENY", kind: kindStrings, usage: "path refused after resolution (repeatable; /proc, /sys and /dev always)"},
	{name: "symlinks", env: "AGENTFS_SYMLINKS", kind: kindString, def: "within", enum: []string{"within", "refuse"},
		usage: "within: follow a link only into a root; refuse: refuse any link"},
	{name: "readonly", env: "AGENTFS_READONLY", usage: "allow only read, ls, find and grep (and index, which writes only the state directory): every mutation is READ_ONLY"},
	{name: "lock-timeout", env: "AGENTFS_LOCK_TIMEOUT", kind: kindDuration, def: "30s", min: "0", max: "24h",
		usage: "how long a mutation waits for its locks"},
	{name: "recover", usage: "on an s3:// root, first roll back the transactions of dead processes and wait (up to --lock-timeout) for live ones, reporting on stderr; on a local root, report the recovery and each journal it could not finish"},
	{name: "format", env: "AGENTFS_FORMAT", kind: kindString, def: "json", enum: []string{"json", "text"},
		usage: "json, or text for humans"},
	{name: "color", env: "AGENTFS_COLOR", kind: kindString, def: "auto", enum: []string{"auto", "always", "never"},
		usage: "colour --format text: auto (on a terminal, unless NO_COLOR is set), always or never"},
	{name: "max-bytes", env: "AGENTFS_MAX_BYTES", kind: kindInt, def: strconv.Itoa(core.DefaultMaxBytes), min: strconv.Itoa(minMaxBytes),
		usage: "bound on each result in bytes"},
	{name: "exit-status", env: "AGENTFS_EXIT_STATUS", usage: "grep and find exit 1 when nothing matched; grep, find and ls exit 4 when the answer is partial (grep timed out, or unreadable entries skipped), and replace when it skipped unreadable entries or left a match in a file it skipped as binary"},
	{name: "quiet", alias: "q", usage: "print no result on success (errors still go to stderr); implies --exit-status"},
	{name: "all", usage: "with --format text (or --print0): read, ls, find and grep print every page to the end"},
	{name: "print0", alias: "0", usage: "find and grep: print the paths, each ended by NUL, as find -print0"},
	{name: "assets", env: "AGENTFS_ASSETS", kind: kindString, usedBy: []string{"publish", "serve"}, valid: schemeError,
		usage: "publish's target: a local folder (served by agentfs serve) or s3://bucket/prefix"},
	{name: "base-url", env: "AGENTFS_BASE_URL", kind: kindString, def: localdir.DefaultBaseURL, usedBy: []string{"publish"}, valid: localdir.BaseURLError,
		usage: "where people reach agentfs serve: the start of a local folder's links"},
	{name: "s3-endpoint", env: "AGENTFS_S3_ENDPOINT", kind: kindString, usedBy: []string{useStore},
		usage: "the S3-compatible service's URL, for s3:// roots and publish (default: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, then AWS)"},
	{name: "s3-idle-timeout", env: "AGENTFS_S3_IDLE_TIMEOUT", kind: kindDuration, def: "60s", min: "1s", max: "24h", usedBy: []string{useStore},
		usage: "how long a request to the S3-compatible service waits with no byte moving before it fails IO_ERROR"},
	{name: "publish-max-size", env: "AGENTFS_PUBLISH_MAX_SIZE", kind: kindInt, def: strconv.Itoa(core.DefaultPublishMaxSize), min: "1", usedBy: []string{"publish"},
		usage: "the largest file publish takes, in bytes"},
}

// minMaxBytes is the smallest --max-bytes: room for a result's fields and a
// small item (a larger one is TOO_LARGE, naming the bound it needs).
const minMaxBytes = 512

// globalFlags are the urfave/cli flags of globals.
func globalFlags() []cli.Flag {
	var out []cli.Flag
	for _, g := range globals {
		out = append(out, g.flag())
	}
	return out
}

func (g globalFlag) flag() cli.Flag {
	var aliases, env []string
	if g.alias != "" {
		aliases = []string{g.alias}
	}
	if v, set := os.LookupEnv(g.env); g.env != "" && (!set || v != "") && (g.usedBy == nil || g.checkEnv() == nil) {
		// Set but empty, a variable is unset, as for every other
		// setting (AGENTFS_FORMAT= was a usage error, exit 2). One of a
		// setting not every command uses, not of its kind, is left to
		// checkUsed: parsed here, it failed every command.
		env = []string{g.env}
	}
	switch g.kind {
	case kindString:
		return &cli.StringFlag{Name: g.name, Aliases: aliases, EnvVars: env, Value: g.def, Usage: g.usage}
	case kindStrings:
		return &pathsFlag{cli.StringSliceFlag{Name: g.name, Aliases: aliases, EnvVars: env, Usage: g.usage}}
	case kindInt:
		n, _ := strconv.Atoi(g.def)
		// Base 10: an environment variable of 0100 is 100, not octal.
		return &cli.IntFlag{Name: g.name, Aliases: aliases, EnvVars: env, Value: n, Usage: g.usage, Base: 10}
	case kindDuration:
		d, _ := time.ParseDuration(g.def)
		return &durationFlag{cli.DurationFlag{Name: g.name, Aliases: aliases, EnvVars: env, Value: d, Usage: g.usage}}
	}
	return &cli.BoolFlag{Name: g.name, Aliases: aliases, EnvVars: env, Usage: g.usage}
}

// pathsFlag is a repeatable flag of paths (--root, --deny), shown and
// named as a urfave/cli slice flag. Each occurrence is one path, taken
// whole: the slice flag split it at commas and trimmed each part, so that
// --deny "/data/a,b" denied /data/a and a relative b, and left /data/a,b
// readable, and --root "/x " was /x. Its variable is a list, its paths
// separated by commas (each trimmed, as before); the first occurrence on
// the command line replaces that list.
type pathsFlag struct{ cli.StringSliceFlag }

func (f *pathsFlag) Apply(set *flag.FlagSet) error {
	v := &pathList{}
	for _, e := range f.EnvVars {
		if s, ok := os.LookupEnv(e); ok {
			for _, p := range strings.Split(s, ",") {
				v.paths = append(v.paths, strings.TrimSpace(p))
			}
			v.fromEnv, f.HasBeenSet = true, true
			break
		}
	}
	for _, name := range f.Names() {
		set.Var(v, name, f.Usage)
	}
	return nil
}

// durationFlag is a global duration flag (--lock-timeout), shown and
// named as a urfave/cli one, whose variable takes a plain number as that
// many seconds (AGENTFS_LOCK_TIMEOUT=5 is 5s), as the flag does
// (valueArgs) and a request field's duration: urfave/cli refused it.
type durationFlag struct{ cli.DurationFlag }

func (f *durationFlag) Apply(set *flag.FlagSet) error {
	for _, e := range f.EnvVars {
		v, ok := os.LookupEnv(e)
		if !ok || v == "" {
			continue
		}
		if text, ok := durationText(v); ok && text != v {
			d, _ := time.ParseDuration(text)
			envs := f.EnvVars
			f.Value, f.EnvVars = d, nil
			err := f.DurationFlag.Apply(set)
			f.EnvVars, f.HasBeenSet = envs, true
			return err
		}
		break
	}
	return f.DurationFlag.Apply(set)
}

// pathList is a pathsFlag's value.
type pathList struct {
	paths   []string
	fromEnv bool // paths are the variable's, until the command line gives one
}

func (l *pathList) Set(s string) error {
	if l.fromEnv {
		l.paths, l.fromEnv = nil, false
	}
	l.paths = append(l.paths, s)
	return nil
}

func (l *pathList) String() string { return strings.Join(l.paths, ",") }

func (l *pathList) Get() any { return slices.Clone(l.paths) }

// pathsOf is the paths of the pathsFlag name.
func pathsOf(c *cli.Context, name string) []string {
	paths, _ := c.Value(name).([]string)
	return paths
}

// checkEnv refuses an environment variable of a global flag whose value
// is not of the flag's kind, naming the variable: --help shows no flag to
// fix, and the parser's words (strconv.ParseBool: ...) say nothing of the
// values it takes. That of a setting not every command uses is
// checkUsed's.
func checkEnv() error {
	for _, g := range globals {
		if g.usedBy != nil {
			continue
		}
		if err := g.checkEnv(); err != nil {
			return err
		}
	}
	return nil
}

// checkEnv refuses g's variable when its value is not of g's kind.
func (g globalFlag) checkEnv() error {
	v := os.Getenv(g.env)
	if g.env == "" || v == "" {
		return nil
	}
	switch g.kind {
	case kindBool:
		if _, err := strconv.ParseBool(v); err != nil {
			return fault.InvalidArgument("%s takes true or false, not %q.", g.env, v).
				WithHint("set %s to true or false (1 or 0), or unset it", g.env)
		}
	case kindInt:
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return fault.InvalidArgument("%s takes a decimal integer, not %q.", g.env, v).
				WithHint("set %s to a number in decimal digits, or unset it", g.env)
		}
	case kindDuration:
		if _, ok := durationText(v); !ok {
			return durationError(g.env, v).
				WithHint("set %s to a duration such as 30s, or unset it", g.env)
		}
	}
	return nil
}

// checkGlobals refuses a global flag's value outside its set or range. A
// value that no global flag of the command line gave came from the flag's
// variable, which the error names then (it named the flag, which a script
// that only set the variable never passed). The variable of a setting
// not every command uses is left to checkUsed; its flag, given on the
// command line, is checked here as every other.
func checkGlobals(c *cli.Context) error {
	given := givenGlobals(argsOf(c))
	for _, g := range globals {
		text, flagged := given[g.name]
		fromEnv := !flagged && g.env != "" && os.Getenv(g.env) != ""
		if fromEnv {
			if g.usedBy != nil {
				continue
			}
			text = os.Getenv(g.env)
		}
		if err := g.check(c, text, fromEnv); err != nil {
			return err
		}
	}
	return nil
}

// checkUsed refuses the variable of a setting that user uses (globalFlag's
// usedBy: a command's name, or useStore) and the command line did not
// override, when its value is not of the flag's kind or outside its
// range: called before the setting is used (for useStore, before any
// request to the store; the AWS_* variables are read there too, and only
// there).
func checkUsed(c *cli.Context, user string) error {
	given := givenGlobals(argsOf(c))
	for _, g := range globals {
		if _, flagged := given[g.name]; !slices.Contains(g.usedBy, user) || flagged || g.env == "" || os.Getenv(g.env) == "" {
			continue
		}
		if err := g.checkEnv(); err != nil {
			return err
		}
		if err := g.check(c, os.Getenv(g.env), true); err != nil {
			return err
		}
	}
	return nil
}

// readOnlyBy is what makes c read-only: the flag --readonly, given on
// the command line, and the variable AGENTFS_READONLY (env, its name),
// when it is true (alone, it set the mode; beside the flag, it would set
// it again once the flag is dropped). READ_ONLY's hint names them, not the
// flag alone, which a script that only set the variable never passed.
func readOnlyBy(c *cli.Context) (flag bool, env string) {
	if !c.Bool("readonly") {
		return false, ""
	}
	_, flag = givenGlobals(argsOf(c))["readonly"]
	const readOnlyEnv = "AGENTFS_READONLY"
	if v, err := strconv.ParseBool(os.Getenv(readOnlyEnv)); err == nil && v {
		env = readOnlyEnv
	}
	if !flag && env == "" {
		flag = true // set some other way (an alias): named as the flag
	}
	return flag, env
}

// readOnlyFix is how to leave c's read-only mode, as READ_ONLY's hint
// says it (core.Tools.ReadOnlyFix).
func readOnlyFix(c *cli.Context) string {
	switch flag, env := readOnlyBy(c); {
	case flag && env != "":
		return "run without --readonly and unset " + env
	case env != "":
		return "unset " + env
	}
	return "run without --readonly"
}

// readOnlyNames names what makes c read-only: --readonly,
// AGENTFS_READONLY or both; "" when c is not read-only.
func readOnlyNames(c *cli.Context) string {
	flag, env := readOnlyBy(c)
	var names []string
	if flag {
		names = append(names, "--readonly")
	}
	if env != "" {
		names = append(names, env)
	}
	return strings.Join(names, " and ")
}

// givenGlobals maps the names of the global flags given on the command
// line args (argsOf), args[0] being the program's name, to the text of
// the value each was last given, as the caller wrote it ("" for a bool
// flag given alone).
func givenGlobals(args []string) map[string]string {
	given := map[string]string{}
	if len(args) == 0 {
		return given
	}
	flags := globalFlags()
	lead, _ := leadingGlobals(args[1:], flags)
	for k := 0; k < len(lead); k++ {
		if f := lookupFlag(flags, lead[k]); f != nil {
			_, text, _ := strings.Cut(lead[k], "=")
			if takesValue(flags, lead[k]) && k+1 < len(lead) {
				k++ // its value, which may look like a flag
				text = lead[k]
			}
			given[f.Names()[0]] = text
		}
	}
	return given
}

// check refuses g's value outside its set or range, naming its variable
// when fromEnv, and quoting text, the value as the caller wrote it (a
// duration normalised, 99h0m0s for 99h, is a text the caller cannot find
// in its command).
func (g globalFlag) check(c *cli.Context, text string, fromEnv bool) error {
	switch g.kind {
	case kindString:
		v := c.String(g.name)
		if g.valid != nil {
			name := "--" + g.name
			if fromEnv {
				name = g.env
			}
			if err := g.valid(name, v); err != nil && fromEnv && g.def == "" {
				return err.WithHint("%s; or unset %s", err.Hint, g.env)
			} else if err != nil && fromEnv {
				return err.WithHint("%s; or unset %s for the default %s", err.Hint, g.env, g.def)
			} else if err != nil {
				return err
			}
		}
		if g.enum == nil || slices.Contains(g.enum, v) {
			return nil
		}
		if fromEnv {
			values := slices.Clone(g.enum)
			if i := slices.Index(values, g.def); i >= 0 {
				values[i] += " (the default)"
			}
			return fault.InvalidArgument("%s must be %s, not %q.", g.env, core.OrList(g.enum), v).
				WithHint("set %s to %s, or unset it", g.env, core.OrList(values))
		}
		others := core.OrList(slices.DeleteFunc(slices.Clone(g.enum), func(e string) bool { return e == g.def }))
		return fault.InvalidArgument("--%s must be %s, not %q.", g.name, core.OrList(g.enum), v).
			WithHint("use --%s %s (the default), or %s", g.name, g.def, others)
	case kindInt, kindDuration:
		v := strconv.Itoa(c.Int(g.name))
		if g.kind == kindDuration {
			v = c.Duration(g.name).String()
		}
		n := g.number(v)
		if (g.min == "" || n >= g.number(g.min)) && (g.max == "" || n <= g.number(g.max)) {
			return nil
		}
		name, bound := "--"+g.name, "at least "+g.min
		if g.max != "" {
			bound = "from " + g.min + " to " + g.max
		}
		if fromEnv {
			name = g.env
		}
		e := fault.InvalidArgument("%s must be %s, not %s.", name, bound, cmp.Or(text, v))
		if fromEnv {
			if g.max != "" {
				bound = "a value " + bound
			}
			return e.WithHint("set %s to %s, or unset it for the default %s", g.env, bound, g.def)
		}
		return e.WithHint("the default is %s", g.def)
	}
	return nil
}

// number is a value or a bound of a numeric flag, in its spelling, as a
// number to compare.
func (g globalFlag) number(text string) int64 {
	var n int64
	var err error
	if g.kind == kindDuration {
		var d time.Duration
		d, err = time.ParseDuration(text)
		n = int64(d)
	} else {
		n, err = strconv.ParseInt(text, 10, 64)
	}
	if err != nil {
		panic("subcommands: --" + g.name + ": " + strconv.Quote(text) + " is not a value of the flag")
	}
	return n
}
