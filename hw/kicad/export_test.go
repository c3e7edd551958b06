package kicad

// PointSeg is the distance from a point to a segment, for the tests of
// package kicad_test.
var PointSeg = pointSeg
