package tpch

import "strconv"

// Row is one generated row. Generators reuse rows: a consumer encodes a
// row before its callback returns and keeps no reference to it.
type Row interface {
	Table() Table
	// AppendTBL appends the row as one line of dbgen's flat file: the
	// columns in table order separated by '|', without dbgen's trailing
	// separator, and a newline. It is also the text that PostgreSQL's
	// COPY (FORMAT text, DELIMITER '|') and MySQL's LOAD DATA read: no
	// value holds '|', a backslash, a tab or a newline.
	AppendTBL(dst []byte) []byte
	// AppendArgs appends the column values in table order: identifiers
	// and integers as int64, decimals as float64, text and dates
	// (YYYY-MM-DD) as string.
	AppendArgs(dst []any) []any
}

const sep = '|'

// appendInt appends v in decimal followed by the separator.
func appendInt(dst []byte, v int64) []byte {
	if v >= 0 && v < 10 {
		return append(dst, byte('0'+v), sep)
	}
	return append(strconv.AppendInt(dst, v, 10), sep)
}

// appendMoney appends an amount in cents as dbgen prints it: an optional
// minus, the units and two decimals ("-12.05", "0.04").
func appendMoney(dst []byte, cents int64) []byte {
	if cents < 0 {
		dst = append(dst, '-')
		cents = -cents
	}
	dst = strconv.AppendInt(dst, cents/100, 10)
	c := cents % 100
	return append(dst, '.', byte('0'+c/10), byte('0'+c%10), sep)
}

// appendPadded appends prefix and v zero-padded to width digits
// (dbgen's "%s%09ld" names).
func appendPadded(dst []byte, prefix string, v int64, width int) []byte {
	dst = append(dst, prefix...)
	var buf [20]byte
	d := strconv.AppendInt(buf[:0], v, 10)
	for i := len(d); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, d...)
}

func appendText(dst []byte, v []byte) []byte { return append(append(dst, v...), sep) }

func appendString(dst []byte, v string) []byte { return append(append(dst, v...), sep) }

func appendDate(dst []byte, day int) []byte {
	d := &dateText[day]
	return append(append(dst, d[:]...), sep)
}

// endLine turns the row's trailing separator into the newline.
func endLine(dst []byte) []byte {
	dst[len(dst)-1] = '\n'
	return dst
}

// money converts cents to the float64 of AppendArgs.
func money(cents int64) float64 { return float64(cents) / 100 }
