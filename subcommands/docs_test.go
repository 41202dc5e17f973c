package subcommands

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/registry"

	"github.com/urfave/cli/v2"
)

var update = flag.Bool("update", false, "rewrite the shell completions in ../completions")

// TestCompletions keeps completions/ in step with the commands and flags:
// it fails when a subcommand or flag is added without regenerating them
// (go test ./subcommands -run Completions -update).
func TestCompletions(t *testing.T) {
	files := map[string]string{
		"../completions/agentfs.bash": bashCompletion(),
		"../completions/_agentfs":     zshCompletion(),
		"../completions/agentfs.fish": fishCompletion(),
	}
	for path, want := range files {
		if *update {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("%s is out of date: run go test ./subcommands -run Completions -update", path)
		}
	}
}

func flagNames(flags []cli.Flag) []string {
	var out []string
	for _, f := range flags {
		for _, n := range f.Names() {
			if len(n) > 1 {
				out = append(out, "--"+n)
			}
		}
	}
	sort.Strings(out)
	return out
}

// complFlag is one flag as the completions see it: its spellings, whether
// it takes a value, and the closed set of its values.
type complFlag struct {
	names []string
	value bool
	enum  []string
}

// complCommand is a subcommand, its own flags, the global flags it takes
// after it, and whether it takes arguments (files are offered then).
type complCommand struct {
	name, usage string
	flags       []complFlag
	globals     []complFlag
	args        bool
}

// helpUsage describes the help subcommand, which urfave/cli does not list
// (reorderArgs makes help ls into ls --help).
const helpUsage = "print the help of agentfs, or of a subcommand"

// answersMany are the subcommands that answer many calls, which
// refuseOneCallShapes refuses --quiet, --all and --print0 for.
var answersMany = []string{"batch", "mcp"}

// completionModel is every subcommand with its flags, and the flags
// before a subcommand: the global ones, --help and --version.
func completionModel() (cmds []complCommand, top []complFlag) {
	enums := map[string][]string{}
	for _, g := range globals {
		enums["*:"+g.name] = g.enum
	}
	args := map[string]bool{} // a tool's: whether a field is an argument
	for _, t := range registry.All() {
		req, _ := t.Types()
		for _, s := range core.Fields(req) {
			if s.Enum != nil {
				enums[t.Info().Name+":"+s.Flag] = s.Enum
			}
			args[t.Info().Name] = args[t.Info().Name] || s.Arg >= 0
		}
	}
	enums["tools:format"] = registry.Formats
	of := func(cmd string, flags []cli.Flag) []complFlag {
		var out []complFlag
		for _, f := range flags {
			cf := complFlag{value: true}
			if v, ok := f.(cli.DocGenerationFlag); ok {
				cf.value = v.TakesValue()
			}
			for _, n := range f.Names() {
				if len(n) == 1 {
					cf.names = append(cf.names, "-"+n)
				} else {
					cf.names = append(cf.names, "--"+n)
				}
			}
			cf.enum = enums[cmd+":"+f.Names()[0]]
			out = append(out, cf)
		}
		slices.SortFunc(out, func(a, b complFlag) int { return strings.Compare(a.names[0], b.names[0]) })
		return out
	}
	gl := of("*", globalFlags())
	help := complFlag{names: []string{"--help", "-h"}}
	for _, s := range subcommandList() {
		c := s.command()
		own := of(c.Name, c.Flags)
		// What the subcommand refuses after it: a shape of one call it
		// has no use for (refusePaging, refuseOneCallShapes), and a
		// global flag its own flag of that name hides (tools --format).
		pages, paths := false, false
		if t, ok := s.(interface{ pagesAndPaths() (bool, bool) }); ok {
			pages, paths = t.pagesAndPaths()
		}
		refused := map[string]bool{"--all": !pages, "--print0": !paths, "--quiet": slices.Contains(answersMany, c.Name)}
		for _, n := range spellings(own, false) {
			refused[n] = true
		}
		var takes []complFlag
		for _, f := range gl {
			if !refused[f.names[0]] {
				takes = append(takes, f)
			}
		}
		_, tool := args[c.Name]
		cmds = append(cmds, complCommand{name: c.Name, usage: c.Usage, flags: own,
			globals: append(takes, help), args: args[c.Name] || !tool && c.ArgsUsage != ""})
	}
	return cmds, append(gl, help, complFlag{names: []string{"--version", "-v"}})
}

// spellings are the names of flags, those that take a value when value.
func spellings(flags []complFlag, valueOnly bool) []string {
	var out []string
	for _, f := range flags {
		if f.value || !valueOnly {
			out = append(out, f.names...)
		}
	}
	return out
}

// valueCases are the shell case patterns cmd:flag of the flags with a
// closed set of values, and those values, a subcommand's own first: a
// global flag of its name (tools --format) is the subcommand's there.
func valueCases(cmds []complCommand, globalFlags []complFlag) (patterns []string, values [][]string) {
	for _, c := range cmds {
		for _, f := range c.flags {
			if f.enum != nil {
				var ps []string
				for _, n := range f.names {
					ps = append(ps, c.name+":"+n)
				}
				patterns, values = append(patterns, strings.Join(ps, "|")), append(values, f.enum)
			}
		}
	}
	for _, f := range globalFlags {
		if f.enum != nil {
			var ps []string
			for _, n := range f.names {
				ps = append(ps, "*:"+n)
			}
			patterns, values = append(patterns, strings.Join(ps, "|")), append(values, f.enum)
		}
	}
	return patterns, values
}

// valueFlagPatterns is the case pattern of every flag that takes a value,
// as cmd:flag (*:flag for a global one).
func valueFlagPatterns(cmds []complCommand, globalFlags []complFlag) string {
	var ps []string
	for _, c := range cmds {
		for _, n := range spellings(c.flags, true) {
			ps = append(ps, c.name+":"+n)
		}
	}
	for _, n := range spellings(globalFlags, true) {
		ps = append(ps, "*:"+n)
	}
	return strings.Join(ps, "|")
}

// The three scripts find the subcommand as the first word that is neither
// a flag nor a global flag's value (agentfs --root /ws read: read, not
// /ws), complete a flag's closed set of values after it, and offer after
// the subcommand its flags and the global ones it takes, and files only
// when it takes arguments; after help, the subcommands.

// names are the names of cmds.
func names(cmds []complCommand) []string {
	var out []string
	for _, c := range cmds {
		out = append(out, c.name)
	}
	return out
}

func bashCompletion() string {
	cmds, top := completionModel()
	var b strings.Builder
	b.WriteString("# bash completion for agentfs (generated by go test ./subcommands -run Completions -update)\n")
	b.WriteString("_agentfs() {\n  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd=\"\" i\n")
	// bash splits --flag=value at the = (COMP_WORDBREAKS): = is a word.
	b.WriteString("  if [[ $cur == = ]]; then cur=\"\"; elif [[ $prev == = ]]; then prev=${COMP_WORDS[COMP_CWORD-2]}; fi\n")
	// It splits a value at a colon too (COMP_WORDBREAKS): s3://b/p is
	// s3 : //b/p.
	fmt.Fprintf(&b, "  for ((i = 1; i < COMP_CWORD; i++)); do\n    case ${COMP_WORDS[i]} in\n      %s) ((i++)); [[ ${COMP_WORDS[i]} == = ]] && ((i++)); while [[ ${COMP_WORDS[i+1]} == : ]]; do ((i += 2)); done;;\n      -*) ;;\n      *) cmd=${COMP_WORDS[i]}; break;;\n    esac\n  done\n",
		strings.Join(spellings(top, true), "|"))
	b.WriteString("  case $cmd:$prev in\n")
	patterns, values := valueCases(cmds, top)
	for i := range patterns {
		fmt.Fprintf(&b, "    %s) COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return;;\n", patterns[i], strings.Join(values[i], " "))
	}
	fmt.Fprintf(&b, "    %s) COMPREPLY=($(compgen -f -- \"$cur\")); return;;\n", valueFlagPatterns(cmds, top))
	b.WriteString("  esac\n")
	b.WriteString("  case $cmd in\n")
	for _, c := range cmds {
		files := ""
		if c.args {
			files = " [[ $cur != -* ]] && COMPREPLY+=($(compgen -f -- \"$cur\"));"
		}
		fmt.Fprintf(&b, "    %s) COMPREPLY=($(compgen -W \"%s %s\" -- \"$cur\"));%s;\n",
			c.name, strings.Join(spellings(c.flags, false), " "), strings.Join(spellings(c.globals, false), " "), files)
	}
	fmt.Fprintf(&b, "    help) COMPREPLY=($(compgen -W \"%s\" -- \"$cur\"));;\n", strings.Join(names(cmds), " "))
	fmt.Fprintf(&b, "    *) COMPREPLY=($(compgen -W \"%s help %s\" -- \"$cur\"));;\n", strings.Join(names(cmds), " "), strings.Join(spellings(top, false), " "))
	b.WriteString("  esac\n}\ncomplete -o filenames -F _agentfs agentfs\n")
	return b.String()
}

// quoted is s in single quotes for zsh (fish quotes a quote with \').
func quoted(s, quote string) string {
	return "'" + strings.ReplaceAll(s, "'", quote) + "'"
}

func zshCompletion() string {
	cmds, top := completionModel()
	var b strings.Builder
	b.WriteString("#compdef agentfs\n# zsh completion for agentfs (generated by go test ./subcommands -run Completions -update)\n")
	// The value of the flag cmd:flag ($1), false when it takes none.
	b.WriteString("_agentfs_value() {\n  case $1 in\n")
	patterns, values := valueCases(cmds, top)
	for i := range patterns {
		fmt.Fprintf(&b, "    (%s) compadd -- %s;;\n", patterns[i], strings.Join(values[i], " "))
	}
	fmt.Fprintf(&b, "    (%s) _files;;\n", valueFlagPatterns(cmds, top))
	b.WriteString("    (*) return 1;;\n  esac\n  return 0\n}\n")
	b.WriteString("_agentfs() {\n  local -a cmds\n  cmds=(\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "    %s\n", quoted(c.name+":"+c.usage, `'\''`))
	}
	fmt.Fprintf(&b, "    %s\n", quoted("help:"+helpUsage, `'\''`))
	b.WriteString("  )\n  local cmd=\"\" prev=${words[CURRENT-1]} i\n")
	fmt.Fprintf(&b, "  for ((i = 2; i < CURRENT; i++)); do\n    case ${words[i]} in\n      (%s) ((i++));;\n      (-*) ;;\n      (*) cmd=${words[i]}; break;;\n    esac\n  done\n",
		strings.Join(spellings(top, true), "|"))
	// A value after its flag, or after the = of --flag=value, which zsh
	// takes as one word.
	b.WriteString("  _agentfs_value $cmd:$prev && return\n")
	b.WriteString("  if [[ $PREFIX == --*=* ]]; then\n    local flag=${PREFIX%%=*}\n    compset -P '*='\n    _agentfs_value $cmd:$flag\n    return\n  fi\n")
	fmt.Fprintf(&b, "  if [[ -z $cmd ]]; then\n    if [[ $PREFIX == -* ]]; then compadd -- %s; else _describe command cmds; fi\n    return\n  fi\n", strings.Join(spellings(top, false), " "))
	b.WriteString("  case $cmd in\n")
	for _, c := range cmds {
		flags := strings.Join(append(spellings(c.flags, false), spellings(c.globals, false)...), " ")
		if c.args {
			fmt.Fprintf(&b, "    (%s) if [[ $PREFIX == -* ]]; then compadd -- %s; else _files; fi;;\n", c.name, flags)
		} else {
			fmt.Fprintf(&b, "    (%s) compadd -- %s;;\n", c.name, flags)
		}
	}
	fmt.Fprintf(&b, "    (help) compadd -- %s;;\n", strings.Join(names(cmds), " "))
	b.WriteString("  esac\n}\n_agentfs \"$@\"\n")
	return b.String()
}

// fishFlag is the complete options of f: its spellings, and -r for a value
// (-x with its values when they are a closed set).
func fishFlag(f complFlag) string {
	var b strings.Builder
	for _, n := range f.names {
		if strings.HasPrefix(n, "--") {
			fmt.Fprintf(&b, " -l %s", n[2:])
		} else {
			fmt.Fprintf(&b, " -s %s", n[1:])
		}
	}
	switch {
	case f.enum != nil:
		fmt.Fprintf(&b, " -xa '%s'", strings.Join(f.enum, " "))
	case f.value:
		b.WriteString(" -r")
	}
	return b.String()
}

func fishCompletion() string {
	cmds, top := completionModel()
	var b strings.Builder
	b.WriteString("# fish completion for agentfs (generated by go test ./subcommands -run Completions -update)\n")
	fmt.Fprintf(&b, `function __agentfs_cmd
    set -l skip 0
    for t in (commandline -opc)[2..-1]
        if test $skip = 1
            set skip 0
            continue
        end
        switch $t
            case %s
                set skip 1
            case '-*'
            case '*'
                echo $t
                return
        end
    end
end
function __agentfs_is
    set -l c (__agentfs_cmd)
    contains -- "$c" $argv
end
`, strings.Join(spellings(top, true), " "))
	for _, f := range top {
		// Offered before a subcommand, and after each that takes it.
		var refusing []string
		for _, c := range cmds {
			if !slices.ContainsFunc(c.globals, func(g complFlag) bool { return g.names[0] == f.names[0] }) {
				refusing = append(refusing, c.name)
			}
		}
		cond := ""
		switch {
		case len(refusing) == len(cmds):
			cond = " -n 'test -z (__agentfs_cmd)'"
		case refusing != nil:
			cond = fmt.Sprintf(" -n 'not __agentfs_is %s'", strings.Join(refusing, " "))
		}
		fmt.Fprintf(&b, "complete -c agentfs%s%s\n", cond, fishFlag(f))
	}
	var noArgs []string
	for _, c := range cmds {
		fmt.Fprintf(&b, "complete -c agentfs -n 'test -z (__agentfs_cmd)' -fa %s -d %s\n", c.name, quoted(c.usage, `\'`))
		for _, f := range c.flags {
			fmt.Fprintf(&b, "complete -c agentfs -n '__agentfs_is %s'%s\n", c.name, fishFlag(f))
		}
		if !c.args {
			noArgs = append(noArgs, c.name)
		}
	}
	fmt.Fprintf(&b, "complete -c agentfs -n 'test -z (__agentfs_cmd)' -fa help -d %s\n", quoted(helpUsage, `\'`))
	fmt.Fprintf(&b, "complete -c agentfs -n '__agentfs_is help' -fa '%s'\n", strings.Join(names(cmds), " "))
	// No files where no argument is taken.
	fmt.Fprintf(&b, "complete -c agentfs -n '__agentfs_is %s' -f\n", strings.Join(noArgs, " "))
	return b.String()
}

// TestCompletionsComplete runs each shell's completion of agentfs in that
// shell: after a global flag and its value the subcommand's flags come
// (agentfs --root /ws read --li offered nothing in all three), a flag's
// closed set of values after it (files were offered), and after the
// subcommand the global flags it takes, files only if it takes arguments. zsh's completion system is replaced by
// functions that print what it is given.
func TestCompletionsComplete(t *testing.T) {
	cases := []struct {
		words []string
		want  []string
	}{
		{[]string{"agentfs", "--root", "/ws", "read", "--li"}, []string{"--limit", "--line-numbers", "--line-truncation"}},
		{[]string{"agentfs", "--root", "/ws", "gr"}, []string{"grep"}},
		{[]string{"agentfs", "grep", "--mode", ""}, []string{"content", "files", "count"}},
		{[]string{"agentfs", "tools", "--format", ""}, registry.Formats},
		{[]string{"agentfs", "--format", ""}, []string{"json", "text"}},
		{[]string{"agentfs", "read", "--rea"}, []string{"--readonly"}},
		// Each subcommand offers only the global flags it takes (batch -q,
		// mcp --print0, write --all were offered and refused), files only
		// when it takes arguments (version offered them), and help,
		// --help and --version where they are taken (they were not).
		{[]string{"agentfs", "read", "app.g"}, []string{"app.go"}},
		{[]string{"agentfs", "version", "app.g"}, nil},
		{[]string{"agentfs", "tools", "app.g"}, nil},
		{[]string{"agentfs", "batch", "--q"}, nil},
		{[]string{"agentfs", "mcp", "--pr"}, nil},
		{[]string{"agentfs", "write", "--al"}, nil},
		{[]string{"agentfs", "read", "--al"}, []string{"--all"}},
		{[]string{"agentfs", "read", "--pr"}, nil},
		{[]string{"agentfs", "grep", "--pr"}, []string{"--print0"}},
		{[]string{"agentfs", "he"}, []string{"help"}},
		{[]string{"agentfs", "help", "gr"}, []string{"grep"}},
		{[]string{"agentfs", "--he"}, []string{"--help"}},
		{[]string{"agentfs", "ls", "--he"}, []string{"--help"}},
		{[]string{"agentfs", "--ver"}, []string{"--version"}},
		{[]string{"agentfs", "ls", "--ver"}, nil},
	}
	// bash splits --root=/ws at the =.
	bashOnly := []struct {
		words []string
		want  []string
	}{
		{[]string{"agentfs", "--root", "=", "/ws", "grep", "--mo"}, []string{"--mode"}},
		{[]string{"agentfs", "--root", "=", "/ws", "grep", "--mode", "=", ""}, []string{"content", "files", "count"}},
		{[]string{"agentfs", "grep", "--mode", "=", "c"}, []string{"content", "count"}},
		// and an s3:// root at its colon: s3 : //b/p (the subcommand
		// was taken to be ":", and its flags were never offered).
		{[]string{"agentfs", "--root", "s3", ":", "//b/p", "read", "--li"}, []string{"--limit", "--line-numbers", "--line-truncation"}},
		{[]string{"agentfs", "--root", "=", "s3", ":", "//b/p", "grep", "--mode", ""}, []string{"content", "files", "count"}},
		{[]string{"agentfs", "--root", "s3", ":", "//b/p", "-q", "--root", "s3", ":", "//c", "gr"}, []string{"grep"}},
	}
	// zsh and fish take --flag=value as one word: its values are completed
	// after the = (zsh offered the flags again).
	joined := []struct {
		words []string
		want  []string
	}{
		{[]string{"agentfs", "find", "--type="}, []string{"--type=file", "--type=dir", "--type=symlink", "--type=other", "--type=any"}},
		{[]string{"agentfs", "--format=j"}, []string{"--format=json"}},
		{[]string{"agentfs", "--root=/ws", "grep", "--mode=c"}, []string{"--mode=content", "--mode=count"}},
		{[]string{"agentfs", "tools", "--format=o"}, []string{"--format=openai"}},
		{[]string{"agentfs", "read", "--limit=5", "--li"}, []string{"--limit", "--line-numbers", "--line-truncation"}},
	}
	shells := []struct {
		name, prog string
		script     func(words []string) string
	}{
		{"bash", "bash", func(w []string) string {
			return fmt.Sprintf("source ../completions/agentfs.bash\nCOMP_WORDS=(%s); COMP_CWORD=%d; _agentfs; printf '%%s\\n' \"${COMPREPLY[@]}\"\n", shellWords(w), len(w)-1)
		}},
		{"zsh", "zsh", func(w []string) string {
			return "compadd() { [[ $1 == -- ]] && shift; printf \"$IPREFIX%s\\n\" \"$@\"; }\n_files() { print -rl -- $IPREFIX${PREFIX}*(N); }\n_describe() { printf '%s\\n' ${${(P)2}%%:*}; }\n" +
				"compset() { [[ $1 == -P && $PREFIX == *=* ]] || return 1; IPREFIX=${PREFIX%%=*}=; PREFIX=${PREFIX#*=}; }\n" +
				"source ../completions/_agentfs >/dev/null\n" +
				fmt.Sprintf("words=(%s); CURRENT=%d; PREFIX=${words[CURRENT]}; _agentfs\n", shellWords(w), len(w))
		}},
		{"fish", "fish", func(w []string) string {
			return fmt.Sprintf("source ../completions/agentfs.fish\ncomplete -C %s | string replace -r '\\t.*' ''; true\n", shellWords([]string{strings.Join(w, " ")}))
		}},
	}
	for _, sh := range shells {
		path, err := exec.LookPath(sh.prog)
		if err != nil {
			t.Logf("%s is not installed: its completion is not run (apt-get install %s; CI installs it)", sh.name, sh.prog)
			continue
		}
		all := cases
		if sh.name == "bash" {
			all = append(slices.Clip(cases), bashOnly...)
		} else {
			all = append(slices.Clip(cases), joined...)
		}
		for _, tc := range all {
			args := []string{"-c", sh.script(tc.words)}
			if sh.name == "zsh" {
				args = []string{"-f", "-c", sh.script(tc.words)}
			}
			// A home of its own: fish warns, on stderr, of one it cannot
			// write (CI's unprivileged pass has none).
			cmd := exec.Command(path, args...)
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: %v\n%s%s", sh.name, err, out, stderr.String())
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if prefix := tc.words[len(tc.words)-1]; strings.HasPrefix(l, prefix) && l != "" {
					got = append(got, l)
				}
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(got, want) {
				t.Errorf("%s completes %q as %q, want %q", sh.name, strings.Join(tc.words, " "), got, want)
			}
		}
	}
}

// shellWords quotes each word for bash, zsh and fish alike.
func shellWords(words []string) string {
	var q []string
	for _, w := range words {
		q = append(q, "'"+strings.ReplaceAll(w, "'", `'\''`)+"'")
	}
	return strings.Join(q, " ")
}

// TestManPage fails when a subcommand or one of its flags is not documented
// in man/agentfs.1.
func TestManPage(t *testing.T) {
	data, err := os.ReadFile("../man/agentfs.1")
	if err != nil {
		t.Fatal(err)
	}
	man := strings.ReplaceAll(string(data), `\-`, "-")
	for _, c := range commands("") {
		if !strings.Contains(man, ".SS "+c.Name) {
			t.Errorf("man/agentfs.1 has no section for %s", c.Name)
		}
		for _, f := range flagNames(append(c.Flags, globalFlags()...)) {
			if f == "--json" {
				continue
			}
			if !strings.Contains(man, f) {
				t.Errorf("man/agentfs.1 does not document %s (of %s)", f, c.Name)
			}
		}
	}
}

// TestGlobalFlagsDocumented fails when a global flag's paragraph in the
// man page's GLOBAL FLAGS does not name what its declaration says: its
// environment variable, short spelling, values, default and bounds.
func TestGlobalFlagsDocumented(t *testing.T) {
	data, err := os.ReadFile("../man/agentfs.1")
	if err != nil {
		t.Fatal(err)
	}
	man := strings.ReplaceAll(string(data), `\-`, "-")
	_, section, _ := strings.Cut(man, ".SH GLOBAL FLAGS\n")
	section, _, _ = strings.Cut(section, "\n.SH ")
	paragraphs := map[string]string{}
	for _, p := range strings.Split(section, ".TP\n")[1:] {
		if m := regexp.MustCompile(`^\\fB--([a-z0-9-]+)`).FindStringSubmatch(p); m != nil {
			paragraphs[m[1]] = p
		}
	}
	for _, g := range globals {
		p, ok := paragraphs[g.name]
		if !ok {
			t.Errorf("man/agentfs.1 GLOBAL FLAGS has no paragraph for --%s", g.name)
			continue
		}
		want := append([]string{g.env, g.def, g.min, g.max}, g.enum...)
		if g.alias != "" {
			want = append(want, "-"+g.alias)
		}
		for _, w := range want {
			if w != "" && !strings.Contains(p, w) {
				t.Errorf("man/agentfs.1 does not say %q of --%s", w, g.name)
			}
		}
	}
	// --version is urfave/cli's own flag, not one of globals.
	if _, ok := paragraphs["version"]; !ok {
		t.Error("man/agentfs.1 GLOBAL FLAGS has no paragraph for --version")
	}
	delete(paragraphs, "version")
	if len(paragraphs) != len(globals) {
		t.Errorf("man/agentfs.1 GLOBAL FLAGS has %d paragraphs for %d global flags", len(paragraphs), len(globals))
	}
}

// TestResultFieldsDocumented fails when a result gains a JSON field that
// man/agentfs.1 does not name, so that a script never meets an undocumented
// field (issue 15.6).
func TestResultFieldsDocumented(t *testing.T) {
	data, err := os.ReadFile("../man/agentfs.1")
	if err != nil {
		t.Fatal(err)
	}
	man := strings.NewReplacer(`\-`, "-", `\fB`, "", `\fR`, "", `\fI`, "").Replace(string(data))
	ours := []string{reflect.TypeFor[core.ReadResult]().PkgPath(), reflect.TypeFor[versionInfo]().PkgPath(),
		reflect.TypeFor[registry.Info]().PkgPath()}
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type, string)
	walk = func(rt reflect.Type, owner string) {
		for rt.Kind() == reflect.Pointer || rt.Kind() == reflect.Slice || rt.Kind() == reflect.Map {
			rt = rt.Elem()
		}
		if rt.Kind() != reflect.Struct || seen[rt] || !slices.Contains(ours, rt.PkgPath()) {
			return
		}
		seen[rt] = true
		for i := 0; i < rt.NumField(); i++ {
			f := rt.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous && name == "" {
				walk(f.Type, owner)
				continue
			}
			if name == "" || name == "-" {
				continue
			}
			if !regexp.MustCompile(`\b` + name + `\b`).MatchString(man) {
				t.Errorf("man/agentfs.1 does not document the field %s of %s", name, owner)
			}
			walk(f.Type, owner)
		}
	}
	for _, r := range []any{core.ReadResult{}, core.LsResult{}, core.FindResult{}, core.GrepResult{},
		core.WriteResult{}, core.EditResult{}, core.RmResult{}, core.PublishResult{}, versionInfo{}, registry.Info{}} {
		rt := reflect.TypeOf(r)
		walk(rt, rt.Name())
	}
	// RESULTS lists "every field a result can carry, by subcommand": a
	// field named elsewhere only is missing there (edit's editsOmitted
	// and rungs were).
	results, _, _ := strings.Cut(man[strings.Index(man, ".SH RESULTS"):], "\n.SH ")
	// The fields of every result (path, nextOffset, truncated) are said
	// once, before the entries.
	common, _, _ := strings.Cut(results, "\n.TP")
	for _, c := range []struct {
		name   string
		result any
	}{{"read", core.ReadResult{}}, {"ls", core.LsResult{}}, {"find", core.FindResult{}},
		{"grep", core.GrepResult{}}, {"write", core.WriteResult{}}, {"edit", core.EditResult{}},
		{"rm", core.RmResult{}}, {"replace", core.ReplaceResult{}}, {"mv", core.MvResult{}},
		{"apply-patch", core.ApplyPatchResult{}}, {"publish", core.PublishResult{}}, {"version", versionInfo{}}} {
		_, entry, ok := strings.Cut(results, "\n.B "+c.name+"\n")
		if !ok {
			t.Errorf("RESULTS in man/agentfs.1 has no entry for %s", c.name)
			continue
		}
		entry, _, _ = strings.Cut(entry, "\n.TP")
		rt := reflect.TypeOf(c.result)
		for i := 0; i < rt.NumField(); i++ {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			named := regexp.MustCompile(`\b` + name + `\b`)
			if name == "" || name == "-" || named.MatchString(common) {
				continue
			}
			if !named.MatchString(entry) {
				t.Errorf("RESULTS in man/agentfs.1 does not name %s's field %s", c.name, name)
			}
		}
	}
}

// TestResultItemsAlways fails when RESULTS says of a list that each of its
// items is "always" "each with" a field the item may leave out
// (omitempty): replace's files were said to carry a diff, which the bound
// drops.
func TestResultItemsAlways(t *testing.T) {
	data, err := os.ReadFile("../man/agentfs.1")
	if err != nil {
		t.Fatal(err)
	}
	man := strings.NewReplacer(`\-`, "-", `\fB`, "", `\fR`, "", `\fI`, "", "\n", " ").Replace(string(data))
	results, _, _ := strings.Cut(man[strings.Index(man, ".SH RESULTS"):], " .SH ")
	eachWith := regexp.MustCompile(`(\w+)(?: \([^()]*\))?, each with ([^.;]*)`)
	optional := regexp.MustCompile(`(?i)optional`)
	listSep := regexp.MustCompile(`\s*\([^()]*\)|,? and |, `)
	checked := 0
	for _, c := range []struct {
		name   string
		result any
	}{{"ls", core.LsResult{}}, {"find", core.FindResult{}}, {"replace", core.ReplaceResult{}},
		{"apply-patch", core.ApplyPatchResult{}}} {
		_, entry, _ := strings.Cut(results, " .B "+c.name+" ")
		entry, _, _ = strings.Cut(entry, " .TP")
		always := optional.Split(entry, 2)[0]
		for _, m := range eachWith.FindAllStringSubmatch(always, -1) {
			item := fieldType(reflect.TypeOf(c.result), m[1])
			if item == nil {
				t.Errorf("RESULTS: %s has no list %s", c.name, m[1])
				continue
			}
			for _, name := range listSep.Split(strings.TrimSpace(m[2]), -1) {
				if name == "" {
					continue
				}
				checked++
				f := fieldType(item, name)
				if f == nil {
					t.Errorf("RESULTS: %s's %s items have no field %s", c.name, m[1], name)
				} else if omitted(item, name) {
					t.Errorf("RESULTS says every item of %s's %s has %s, which the item may leave out", c.name, m[1], name)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("RESULTS names no field of an item as always there: the pattern no longer matches it")
	}
}

// fieldType is the element type of rt's JSON field name (through pointers
// and slices), or nil.
func fieldType(rt reflect.Type, name string) reflect.Type {
	for i := 0; i < rt.NumField(); i++ {
		if n, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ","); n == name {
			ft := rt.Field(i).Type
			for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
				ft = ft.Elem()
			}
			return ft
		}
	}
	return nil
}

// omitted says whether rt's JSON field name is left out when empty.
func omitted(rt reflect.Type, name string) bool {
	for i := 0; i < rt.NumField(); i++ {
		n, opts, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if n == name {
			return strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
		}
	}
	return false
}

// TestDocumentedConstraintsDeclared fails when the man page documents, for
// a flag of a tool, a default, a bound or a closed set of values that the
// request field does not declare in its tags (so that the schema, --help
// and the checks would not hold it), or declares otherwise; and when a
// bound or value a tag declares is not in the tool's section.
func TestDocumentedConstraintsDeclared(t *testing.T) {
	data, err := os.ReadFile("../man/agentfs.1")
	if err != nil {
		t.Fatal(err)
	}
	man := strings.NewReplacer(`\-`, "-", `\fB`, "", `\fR`, "", `\fI`, "", "\n", " ").Replace(string(data))
	var (
		flagRE    = regexp.MustCompile(`--([a-z][a-z0-9-]*)`)
		clauseEnd = regexp.MustCompile(`--[a-z]|\. |;`)
		paren     = regexp.MustCompile(`\s*\([^()]*\)`)
		// "(default 200, at most 1000)", "(default **)", ", default the
		// current directory", "content (the default)"; "(default and at
		// most 2000)" is a default that also caps, not a bound.
		defaultRE = regexp.MustCompile(`\(default and at most (\d+)\)|\(default ([^,;)]+)|, default (the current directory)|^\s*(\w+) \(the default\)`)
		maxRE     = regexp.MustCompile(`[^d] at most (\d+)`)
		minRE     = regexp.MustCompile(`at least (\d+)`)
		rangeRE   = regexp.MustCompile(`\b(\d+) to (\d+)\b`)
		enumRE    = regexp.MustCompile(`^\s*([a-z0-9]+(?:, [a-z0-9]+)* or [a-z0-9]+)\b`)
	)
	num := func(p *int64) string {
		if p == nil {
			return "none"
		}
		return fmt.Sprint(*p)
	}
	found := 0
	for _, info := range registry.List() {
		_, section, ok := strings.Cut(man, ".SS "+info.Name+" ")
		if !ok {
			t.Errorf("man/agentfs.1 has no section for %s", info.Name)
			continue
		}
		if end := strings.Index(section, " .S"); end >= 0 {
			section = section[:end]
		}
		props := map[string]core.Property{}
		for _, p := range info.InputSchema.Properties {
			props[kebab(p.Name)] = p
		}
		for _, m := range flagRE.FindAllStringSubmatchIndex(section, -1) {
			p, ok := props[section[m[2]:m[3]]]
			if !ok {
				continue
			}
			clause := section[m[1]:]
			if end := clauseEnd.FindStringIndex(clause); end != nil {
				clause = clause[:end[0]]
			}
			what := fmt.Sprintf("%s --%s %q", info.Name, section[m[2]:m[3]], clause)
			check := func(keyword, documented, declared string) {
				found++
				if documented != declared {
					t.Errorf("%s: the man page says %s %s, the tags %s", what, keyword, documented, declared)
				}
			}
			if d := defaultRE.FindStringSubmatch(clause); d != nil {
				doc := d[1] + d[2] + d[4]
				if d[3] != "" {
					doc = "."
				}
				check("default", doc, fmt.Sprint(p.Schema.Default))
			}
			if r := rangeRE.FindStringSubmatch(clause); r != nil {
				check("minimum", r[1], num(p.Schema.Minimum))
				check("maximum", r[2], num(p.Schema.Maximum))
			}
			if r := maxRE.FindStringSubmatch(clause); r != nil {
				check("maximum", r[1], num(p.Schema.Maximum))
			}
			if r := minRE.FindStringSubmatch(clause); r != nil {
				check("minimum", r[1], num(p.Schema.Minimum))
			}
			if e := enumRE.FindStringSubmatch(paren.ReplaceAllString(clause, "")); e != nil {
				check("values", e[1], core.OrList(p.Schema.Enum))
			}
		}
		for _, p := range info.InputSchema.Properties {
			for _, v := range append(slices.Clone(p.Schema.Enum), strings.TrimPrefix(num(p.Schema.Maximum), "none")) {
				if v != "" && !regexp.MustCompile(`\b`+v+`\b`).MatchString(section) {
					t.Errorf("man/agentfs.1 section %s does not name %s of %s", info.Name, v, p.Name)
				}
			}
		}
	}
	// The man page documents at least these: read limit; find pattern,
	// path, type, limit (2); grep context (2), mode (2), limit (2),
	// timeout; write lineEnding; ls depth (2), limit (2).
	if found < 18 {
		t.Errorf("only %d documented constraints found: has the man page's wording changed?", found)
	}
}

// kebab is a JSON field's flag: byteOffset -> byte-offset.
func kebab(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('-')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
