// Package fault is the error every agentfs layer returns: a stable code
// from the contract, a one-sentence message, the path and a hint the caller
// can act on. It is a leaf, so that backends, the tools and the command line
// share one error type without depending on each other.
package fault
