# Sourced by the benchmarks, from the repository's top: build_agentfs OUT
# builds agentfs at OUT as the README installs it (static, -trimpath,
# without urfave/cli's docs generator, stripped), the binary users run. A
# plain go build links cgo and the docs generator's initialisers: each call
# started 2 ms later (7.5 ms against 5.4 for `agentfs version`, hyperfine),
# about a tenth of an indexed search of a rare literal.
build_agentfs() {
  CGO_ENABLED=0 go build -trimpath -tags urfave_cli_no_docs -ldflags='-s -w' -o "$1" ./cmd/agentfs
}
