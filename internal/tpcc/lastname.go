package tpcc

// syllables are the ten syllables of C_LAST (TPC-C 4.3.2.3), indexed by digit.
var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// lastNames holds the 1,000 possible customer last names, built once so
// that LastName never allocates (Payment and Order-Status inputs hold it).
var lastNames = func() (names [1000]string) {
	var buf []byte
	for n := range names {
		buf = AppendLastName(buf[:0], n)
		names[n] = string(buf)
	}
	return names
}()

// AppendLastName appends the customer last name of num in [0..999]: the
// syllables of its three digits, hundreds first (TPC-C 4.3.2.3; the
// specification's example: 371 gives "PRICALLYOUGHT"). num outside the
// range is reduced modulo 1000.
func AppendLastName(dst []byte, num int) []byte {
	num %= 1000
	if num < 0 {
		num += 1000
	}
	dst = append(dst, syllables[num/100]...)
	dst = append(dst, syllables[num/10%10]...)
	return append(dst, syllables[num%10]...)
}

// LastName returns the customer last name of num in [0..999] (TPC-C 4.3.2.3).
func LastName(num int) string {
	num %= 1000
	if num < 0 {
		num += 1000
	}
	return lastNames[num]
}
