package kicad

import "strings"

// Model3D is the 3-D model KiCad's library footprint links: the STEP file
// of the same name in the library's .3dshapes folder of KiCad 9's models
// (Debian's kicad-packages3d), placed as the footprint is.
func Model3D(footprint string) string {
	lib, name, _ := strings.Cut(footprint, ":")
	return "${KICAD9_3DMODEL_DIR}/" + lib + ".3dshapes/" + name + ".step"
}
