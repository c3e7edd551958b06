package kicad

// PointSeg is the distance from a point to a segment, for the tests of
// package kicad_test.
var PointSeg = pointSeg

// AllUnfilledFiles is AllFiles with the pours left unfilled, and Unfill
// takes a board's fills out: the freshness test compares the two without
// running KiCad's zone filler, and FillZones runs it.
var (
	AllUnfilledFiles = func() (map[string][]byte, error) { return allFiles(nil, false) }
	Unfill           = unfill
	FillZones        = fillZones
)
