package tcpnet

// Unprotected is the mode whose frames carry no tag: the benchmarks'
// baseline for what authentication and encryption cost.
const Unprotected = unprotected
