package cost

import (
	"math"
	"strconv"
	"strings"
)

// plain formats an input exactly as it was given, with thousands
// separators: 3717 → "3,717", 0.0416 → "0.0416".
func plain(v float64) string {
	return group(strconv.FormatFloat(v, 'f', -1, 64))
}

// rounded formats a derived quantity with at most decimals decimals,
// trailing zeros dropped: 60928.5 → "60,928.5", 2 → "2".
func rounded(v float64, decimals int) string {
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return group(s)
}

// money formats an amount with its currency code, rounded to the cent;
// whole amounts have no decimals ("34,075 USD"), others two
// ("139.82 USD").
func money(v float64, currency string) string {
	c := math.Round(v * 100)
	var s string
	if math.Mod(c, 100) == 0 {
		s = strconv.FormatFloat(c/100, 'f', 0, 64)
	} else {
		s = strconv.FormatFloat(c/100, 'f', 2, 64)
	}
	if s == "-0" {
		s = "0"
	}
	return group(s) + " " + currency
}

// price formats an input amount exactly as given, with its currency.
func price(v float64, currency string) string { return plain(v) + " " + currency }

// group puts thousands separators into the integer part of a formatted
// number.
func group(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	b.WriteString(sign)
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if hasFrac {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// plural is n followed by one or many.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return group(strconv.Itoa(n)) + " " + many
}

// Money formats an amount with its currency code, rounded to the cent
// and without decimals when whole: "34,075 USD", "139.82 USD".
func Money(v float64, currency string) string { return money(v, currency) }
