// Package search decides fast which lines of a buffer match a query: a
// fixed string through SIMD scans, a regex through the literal or run of
// byte classes every match must hold (a shift-and matcher, AVX2 scans on
// amd64 with a portable fallback), so that Go's regexp only sees lines that
// may match. It also explains an invalid regex as INVALID_REGEX with the
// position and the RE2 construct at fault. It knows nothing of files:
// grep's searcher in core feeds it buffers.
package search
