package x

// ANCHOR: a
// X is one.
const X = 1
