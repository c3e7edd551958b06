package papers

// Internals the external tests compare against.

func ToBits[T Number](v T) uint64   { return toBits(v) }
func FromBits[T Number](b uint64) T { return fromBits[T](b) }
func WidthOf[T Number]() int        { return widthOf[T]() }
func IsFloat[T Number]() bool       { return kindOf[T]() == floatKind }
func Identity[T Number](op Op) T    { return identity[T](op, kindOf[T]()) }
