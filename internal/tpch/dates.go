package tpch

import "time"

// Dates of the population (clause 4.2.3): dbgen counts days from
// STARTDATE, 1992-01-01, over TOTDATE days to ENDDATE, 1998-12-31.
// CURRENTDATE, 1995-06-17, splits shipped from open line items and sets
// the return flags.
const (
	totalDays = 2557 // TOTDATE
	// currentDay is CURRENTDATE as a day number from STARTDATE.
	currentDay = 1263
	// Order dates are drawn from STARTDATE to ENDDATE − 151 days, so that
	// every line's ship and receipt dates stay within ENDDATE.
	lastOrderDay   = totalDays - (shipDaysMax + receiptDaysMax) - 1
	shipDaysMax    = 121 // L_SHIPDATE = O_ORDERDATE + [1 .. 121]
	commitDaysMin  = 30  // L_COMMITDATE = O_ORDERDATE + [30 .. 90]
	commitDaysMax  = 90
	receiptDaysMax = 30 // L_RECEIPTDATE = L_SHIPDATE + [1 .. 30]
)

// startDate is STARTDATE.
var startDate = time.Date(1992, 1, 1, 0, 0, 0, 0, time.UTC)

// dateText holds each day's date as YYYY-MM-DD (dbgen's asc_date).
var dateText = func() (d [totalDays][10]byte) {
	for i := range d {
		startDate.AddDate(0, 0, i).AppendFormat(d[i][:0], time.DateOnly)
	}
	return d
}()

// isoDate returns day n from STARTDATE as YYYY-MM-DD.
func isoDate(n int) string { return string(dateText[n][:]) }
