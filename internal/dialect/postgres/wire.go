package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// wireConn is a session's connection once pgx has opened it (address,
// authentication, TLS, the raw socket of sessionConn): the session's
// statements then go over it as the few messages of PostgreSQL's extended
// query protocol they need, built in and read from buffers the session
// keeps. Per statement: Parse (the first time only: statements are
// prepared on the connection under a name), Bind with the parameters in
// text form, Execute; one Sync ends a batch of them, one round trip. The
// server answers ParseComplete, BindComplete, the rows (DataRow, in text
// form) and CommandComplete per statement, or an ErrorResponse after
// which it skips the rest of the batch, then ReadyForQuery.
//
// pgx does the same work with a statement-cache lookup, an encode plan
// per argument, a scan plan per column, a result reader and a context
// watch on every statement: measured, 12% of the procedure path's CPU
// and 18% of client SQL's, whose allocations also made most of its 14% in
// the garbage collector (docs/architecture.md, "The driver's cost").
//
// The protocol is PostgreSQL's documented version 3.0 (the manual's
// "Message Flow: Extended Query" and "Message Formats"): every message is
// a type byte and a big-endian 32-bit length that counts itself.
// Parameters are sent without types: the server infers them from the
// statement, as it does for pgx's. Results come as text in the session's
// DateStyle, which sessionConn sets to ISO.
//
// A wireConn is owned by one goroutine; only interrupt may be called from
// another. After an I/O or protocol error the connection is broken: every
// later call returns an error that Classify calls a lost connection.
type wireConn struct {
	conn net.Conn

	// Building: the messages of the batch being built, and where in them
	// the Bind being built starts.
	out      []byte
	bindAt   int
	paramsAt int
	params   int
	queued   int   // statements in out
	badParam error // a parameter of a type no encoding exists for
	// parsing are the statements whose Parse is in out, in order.
	parsing []*wireStmt

	// Reading: the batch in flight. in[pos:end] is read and not parsed.
	in       []byte
	pos, end int
	inFlight bool        // ReadyForQuery not read yet
	flight   []*wireStmt // Parses in flight, in order: each ParseComplete marks the first parsed
	inResult bool        // between a statement's BindComplete and its end
	row      []byte      // the current DataRow's body (valid until the next read)
	affected int64       // rows affected, from the last CommandComplete
	batchErr error       // the server's error for the batch in flight
	// txStatus is the last ReadyForQuery's transaction status: 'I' idle,
	// 'T' in a transaction block, 'E' in a failed one.
	txStatus byte

	// unwatch ends the watch of the batch's context, when it can be
	// canceled; canceled holds that context's error once it interrupted
	// the connection.
	unwatch  func() bool
	mu       sync.Mutex
	canceled error

	broken error
}

// wireStmt is a statement a session prepares on its connection, under
// name, the first time it is bound.
type wireStmt struct {
	name, sql string
	parsed    bool // the server has it
	pending   bool // its Parse is queued or in flight
}

// wireReadSize is the read buffer's initial size; a larger message (a long
// error report, a wide row) grows it.
const wireReadSize = 8 << 10

func newWireConn(c net.Conn) *wireConn {
	return &wireConn{conn: c, out: make([]byte, 0, 1024), in: make([]byte, wireReadSize), txStatus: 'I'}
}

// errCallCanceled breaks a connection whose batch was canceled: later
// calls fail as on a lost connection.
var errCallCanceled = fmt.Errorf("a canceled call interrupted it: %w", net.ErrClosed)

// Building a batch.

// bind starts a Bind of the statement s to the unnamed portal, preceded by
// its Parse when the server does not have it yet; the parameters follow
// (param*), then execute.
func (w *wireConn) bind(s *wireStmt) {
	if !s.parsed && !s.pending {
		at := len(w.out)
		w.out = append(w.out, 'P', 0, 0, 0, 0)
		w.out = append(w.out, s.name...)
		w.out = append(w.out, 0)
		w.out = append(w.out, s.sql...)
		w.out = append(w.out, 0, 0, 0) // no parameter types given
		binary.BigEndian.PutUint32(w.out[at+1:], uint32(len(w.out)-at-1))
		s.pending = true
		w.parsing = append(w.parsing, s)
	}
	w.bindAt = len(w.out)
	w.out = append(w.out, 'B', 0, 0, 0, 0, 0) // type, length (set by execute), portal ""
	w.out = append(w.out, s.name...)
	w.out = append(w.out, 0, 0, 0) // statement name's end; 0 format codes: every parameter is text
	w.paramsAt = len(w.out)
	w.out = append(w.out, 0, 0)
	w.params = 0
}

// paramStart opens a parameter's value; paramEnd sets its length.
func (w *wireConn) paramStart() int {
	w.out = append(w.out, 0, 0, 0, 0)
	w.params++
	return len(w.out)
}

func (w *wireConn) paramEnd(at int) {
	binary.BigEndian.PutUint32(w.out[at-4:], uint32(len(w.out)-at))
}

func (w *wireConn) paramInt(v int64) {
	at := w.paramStart()
	w.out = strconv.AppendInt(w.out, v, 10)
	w.paramEnd(at)
}

func (w *wireConn) paramText(v string) {
	at := w.paramStart()
	w.out = append(w.out, v...)
	w.paramEnd(at)
}

func (w *wireConn) paramBytes(v []byte) {
	at := w.paramStart()
	w.out = append(w.out, v...)
	w.paramEnd(at)
}

// paramTimestamp sends t's wall clock, as pgx does for a TIMESTAMP
// (without time zone) parameter: the time zone is dropped, not converted.
func (w *wireConn) paramTimestamp(t time.Time) {
	at := w.paramStart()
	w.out = appendTimestamp(w.out, t)
	w.paramEnd(at)
}

// paramAny sends v, one of the types tpcc's statements pass.
func (w *wireConn) paramAny(v any) {
	switch x := v.(type) {
	case int64:
		w.paramInt(x)
	case int:
		w.paramInt(int64(x))
	case int32:
		w.paramInt(int64(x))
	case float64:
		// The shortest decimal that reads back as x, as pgx sends a
		// float64 to a NUMERIC parameter.
		at := w.paramStart()
		w.out = strconv.AppendFloat(w.out, x, 'f', -1, 64)
		w.paramEnd(at)
	case string:
		w.paramText(x)
	case []byte:
		w.paramBytes(x)
	case bool:
		if x {
			w.paramText("t")
		} else {
			w.paramText("f")
		}
	case time.Time:
		w.paramTimestamp(x)
	case nil:
		w.out = binary.BigEndian.AppendUint32(w.out, math.MaxUint32) // -1: NULL
		w.params++
	default:
		w.paramText("")
		if w.badParam == nil {
			w.badParam = fmt.Errorf("no encoding for a parameter of type %T", v)
		}
	}
}

// execute ends the Bind (every result column in text form) and appends an
// Execute of the unnamed portal.
func (w *wireConn) execute() {
	binary.BigEndian.PutUint16(w.out[w.paramsAt:], uint16(w.params))
	w.out = append(w.out, 0, 0) // no result format codes: every column is text
	binary.BigEndian.PutUint32(w.out[w.bindAt+1:], uint32(len(w.out)-w.bindAt-1))
	w.out = append(w.out, 'E', 0, 0, 0, 9, 0, 0, 0, 0, 0) // portal "", no row limit
	w.queued++
}

// discard drops the batch being built.
func (w *wireConn) discard() {
	w.out = w.out[:0]
	for _, s := range w.parsing {
		s.pending = false
	}
	w.parsing = w.parsing[:0]
	w.queued = 0
	w.badParam = nil
}

// send ends the batch being built with Sync and sends it. The batch in
// flight, if any, must have been finished. A ctx that can be canceled is
// watched until the batch is finished (the run driver's calls get one
// that cannot: its sessions are Interrupters); its cancelation interrupts
// the connection.
func (w *wireConn) send(ctx context.Context) error {
	if w.inFlight {
		w.discard()
		return errors.New("a batch is sent before the one in flight was read")
	}
	if err := w.badParam; err != nil {
		w.discard()
		return err
	}
	if w.broken != nil {
		w.discard()
		return w.broken
	}
	if ctx.Done() != nil {
		if err := ctx.Err(); err != nil {
			w.discard()
			return err
		}
		w.unwatch = context.AfterFunc(ctx, func() {
			w.mu.Lock()
			w.canceled = ctx.Err()
			w.mu.Unlock()
			w.interrupt()
		})
	}
	w.out = append(w.out, 'S', 0, 0, 0, 4)
	w.flight = append(w.flight[:0], w.parsing...)
	w.parsing = w.parsing[:0]
	w.queued = 0
	w.inFlight, w.inResult, w.batchErr = true, false, nil
	_, err := w.conn.Write(w.out)
	w.out = w.out[:0]
	if err != nil {
		return w.fail(err)
	}
	return nil
}

// Reading a batch's answers, statement by statement.

// roundTrip sends the batch built and reads the answers to the end: the
// first row of its last statement goes into dest (tpcc.ErrNoRows when
// there is none; not read when dest is empty), the other results are
// skipped. The server's error for the batch is returned as a
// *pgconn.PgError.
func (w *wireConn) roundTrip(ctx context.Context, dest ...any) error {
	stmts := w.queued
	if err := w.send(ctx); err != nil {
		return err
	}
	for i := range stmts {
		if err := w.result(); err != nil {
			return err
		}
		if i < stmts-1 || len(dest) == 0 {
			continue
		}
		more, err := w.next()
		switch {
		case err != nil:
			return err
		case !more:
			if err := w.finish(); err != nil {
				return err
			}
			return tpcc.ErrNoRows
		}
		if err := w.scan(dest...); err != nil {
			_ = w.finish()
			return err
		}
	}
	return w.finish()
}

// result moves to the next statement's result, finishing the current one
// first; its rows are then read with next. The server's error for the
// batch is returned for its statement and for every later one (the server
// skipped them).
func (w *wireConn) result() error {
	if w.inResult {
		if err := w.skipRows(); err != nil {
			return err
		}
	}
	for {
		if w.batchErr != nil || w.broken != nil {
			return w.firstErr()
		}
		if !w.inFlight {
			return errors.New("no statement result left in the batch")
		}
		typ, body, err := w.message()
		if err != nil {
			return err
		}
		switch typ {
		case '1': // ParseComplete
			w.parseComplete()
		case '2': // BindComplete
			w.inResult, w.affected = true, 0
			return nil
		default:
			if err := w.unexpected(typ, body); err != nil {
				return err
			}
		}
	}
}

// next reads the current statement's next row (then in w.row); false at
// its end, when w.affected holds its row count.
func (w *wireConn) next() (bool, error) {
	for w.inResult {
		typ, body, err := w.message()
		if err != nil {
			return false, err
		}
		switch typ {
		case 'D': // DataRow
			w.row = body
			return true, nil
		case 'C': // CommandComplete: "INSERT 0 5", "UPDATE 3", "SELECT 1", "BEGIN"
			w.inResult = false
			w.affected = commandRows(body)
			return false, nil
		case 'I': // EmptyQueryResponse
			w.inResult = false
			return false, nil
		case 'N', 'S', 'A':
			continue
		}
		w.inResult = false
		return false, w.unexpected(typ, body)
	}
	return false, nil
}

// skipRows reads the current statement's remaining rows.
func (w *wireConn) skipRows() error {
	for {
		more, err := w.next()
		if err != nil || !more {
			return err
		}
	}
}

// finish reads the batch in flight up to ReadyForQuery and returns the
// server's error for it, if any.
func (w *wireConn) finish() error {
	for w.inFlight && w.broken == nil {
		typ, body, err := w.message()
		if err != nil {
			return err
		}
		switch typ {
		case '1':
			w.parseComplete()
		case '2', 'D', 'C', 'I':
		default:
			if err := w.unexpected(typ, body); err != nil && w.broken != nil {
				return err
			}
		}
	}
	return w.firstErr()
}

// parseComplete marks the first statement whose Parse is in flight as
// prepared on the connection.
func (w *wireConn) parseComplete() {
	if len(w.flight) > 0 {
		w.flight[0].parsed, w.flight[0].pending = true, false
		w.flight = w.flight[1:]
	}
}

func (w *wireConn) firstErr() error {
	if w.broken != nil {
		return w.broken
	}
	return w.batchErr
}

// unexpected handles a message that is not the one awaited: an
// ErrorResponse (kept as the batch's error; the server skips to the end
// of the batch, so the rest of it is read at once), ReadyForQuery (the
// batch ended), or one that may come at any time (notices, parameter
// changes, notifications: skipped). Any other message breaks the
// connection.
func (w *wireConn) unexpected(typ byte, body []byte) error {
	switch typ {
	case 'E': // ErrorResponse
		var er pgproto3.ErrorResponse
		if err := er.Decode(body); err != nil {
			return w.fail(fmt.Errorf("malformed ErrorResponse: %w", err))
		}
		if w.batchErr == nil {
			w.batchErr = pgconn.ErrorResponseToPgError(&er)
		}
		w.inResult = false
		if err := w.finish(); w.broken != nil {
			return err
		}
		return w.batchErr
	case 'Z': // ReadyForQuery
		if len(body) != 1 {
			return w.fail(errors.New("malformed ReadyForQuery"))
		}
		w.txStatus = body[0]
		w.inFlight, w.inResult = false, false
		for _, s := range w.flight {
			s.pending = false // its Parse was skipped after an error
		}
		w.flight = w.flight[:0]
		if w.unwatch != nil {
			if !w.unwatch() {
				return w.fail(nil)
			}
			w.unwatch = nil
		}
		if w.batchErr != nil {
			return w.batchErr
		}
		return errors.New("no statement result left in the batch")
	case 'N', 'S', 'A': // NoticeResponse, ParameterStatus, NotificationResponse
		return nil
	}
	return w.fail(fmt.Errorf("unexpected message %q", typ))
}

// commandRows is the row count at the end of a CommandComplete tag, or 0.
func commandRows(tag []byte) int64 {
	if n := len(tag); n > 0 && tag[n-1] == 0 {
		tag = tag[:n-1]
	}
	var v int64
	var mul int64 = 1
	for i := len(tag) - 1; i >= 0 && tag[i] >= '0' && tag[i] <= '9'; i-- {
		v += int64(tag[i]-'0') * mul
		mul *= 10
	}
	return v
}

// message returns the next message's type and body; the body is valid
// until the next call.
func (w *wireConn) message() (byte, []byte, error) {
	if w.broken != nil {
		return 0, nil, w.broken
	}
	if err := w.fill(5); err != nil {
		return 0, nil, w.fail(err)
	}
	typ := w.in[w.pos]
	n := int(binary.BigEndian.Uint32(w.in[w.pos+1:]))
	if n < 4 || n > 1<<30 {
		return 0, nil, w.fail(fmt.Errorf("message %q of impossible length %d", typ, n))
	}
	if err := w.fill(1 + n); err != nil {
		return 0, nil, w.fail(err)
	}
	body := w.in[w.pos+5 : w.pos+1+n]
	w.pos += 1 + n
	return typ, body, nil
}

// fill reads until at least n bytes are unparsed, moving them to the front
// of the buffer (or into a larger one) when they would not fit.
func (w *wireConn) fill(n int) error {
	if w.end-w.pos >= n {
		return nil
	}
	if w.pos == w.end {
		w.pos, w.end = 0, 0
	}
	if w.pos+n > len(w.in) {
		if n > len(w.in) {
			in := make([]byte, max(n, 2*len(w.in)))
			w.end = copy(in, w.in[w.pos:w.end])
			w.in = in
		} else {
			w.end = copy(w.in, w.in[w.pos:w.end])
		}
		w.pos = 0
	}
	for w.end-w.pos < n {
		k, err := w.conn.Read(w.in[w.end:])
		w.end += k
		if err != nil && w.end-w.pos < n {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// fail breaks the connection, closing the socket, and returns the error
// for the call that found it: err, or the context's error when the
// batch's context interrupted the connection (later calls then get
// errCallCanceled).
func (w *wireConn) fail(err error) error {
	if w.broken != nil {
		return w.broken
	}
	_ = w.conn.Close()
	if w.unwatch != nil {
		w.unwatch()
		w.unwatch = nil
	}
	w.mu.Lock()
	canceled := w.canceled
	w.mu.Unlock()
	w.inFlight, w.inResult = false, false
	if err == nil && canceled == nil {
		// The watch fired as the batch ended: the context's error is
		// not recorded yet.
		canceled = context.Canceled
	}
	if canceled != nil {
		w.broken = errCallCanceled
		if err == nil {
			return canceled
		}
		return fmt.Errorf("%w (%w)", canceled, err)
	}
	w.broken = fmt.Errorf("connection broken: %w", err)
	return w.broken
}

// interrupt expires the connection's deadline: the call in flight fails
// at once with a timeout, and so does any later one. Safe from another
// goroutine (net.Conn deadlines are).
func (w *wireConn) interrupt() {
	_ = w.conn.SetDeadline(time.Now())
}

// close sends Terminate, as libpq and pgx do, and closes the socket.
func (w *wireConn) close() error {
	if w.broken == nil {
		_ = w.conn.SetWriteDeadline(time.Now().Add(closeTimeout))
		_, _ = w.conn.Write([]byte{'X', 0, 0, 0, 4})
	}
	err := w.conn.Close()
	if w.broken != nil || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// Decoding a row.

// scan decodes the current row's columns, in text form, into dest: *int64,
// *int, *float64, *string, *time.Time, *bool or *any (nil for NULL, else
// the text); a nil dest skips its column. tpcc.ScanText decodes all but
// timestamps and booleans (decodeTimeOrBool).
func (w *wireConn) scan(dest ...any) error {
	b := w.row
	if len(b) < 2 {
		return errors.New("malformed DataRow")
	}
	if n := int(binary.BigEndian.Uint16(b)); n != len(dest) {
		return fmt.Errorf("%d columns scanned into %d destinations", n, len(dest))
	}
	b = b[2:]
	for i, d := range dest {
		if len(b) < 4 {
			return errors.New("malformed DataRow")
		}
		n := int32(binary.BigEndian.Uint32(b))
		b = b[4:]
		var v []byte
		null := n < 0
		if !null {
			if int(n) > len(b) {
				return errors.New("malformed DataRow")
			}
			v, b = b[:n], b[n:]
		}
		ok, err := tpcc.ScanText(v, null, d)
		if !ok {
			err = decodeTimeOrBool(v, d)
		}
		if err != nil {
			return fmt.Errorf("column %d: %w", i+1, err)
		}
	}
	return nil
}

// decodeTimeOrBool decodes a value that is not NULL into the
// destinations tpcc.ScanText leaves to the dialect.
func decodeTimeOrBool(v []byte, dest any) error {
	switch d := dest.(type) {
	case *time.Time:
		t, err := parseTimestamp(v)
		*d = t
		return err
	case *bool:
		if len(v) != 1 || (v[0] != 't' && v[0] != 'f') {
			return fmt.Errorf("%q: not a boolean", v)
		}
		*d = v[0] == 't'
		return nil
	}
	return fmt.Errorf("cannot scan into %T", dest)
}

// parseTimestamp parses a TIMESTAMP in the ISO DateStyle,
// YYYY-MM-DD HH:MM:SS[.F...], as a UTC time (pgx's reading of a
// timestamp without time zone).
func parseTimestamp(v []byte) (time.Time, error) {
	bad := func() (time.Time, error) { return time.Time{}, fmt.Errorf("%q: not an ISO timestamp", v) }
	if len(v) < 19 || v[4] != '-' || v[7] != '-' || v[10] != ' ' || v[13] != ':' || v[16] != ':' {
		return bad()
	}
	num := func(b []byte) int {
		x := 0
		for _, c := range b {
			if c < '0' || c > '9' {
				return -1
			}
			x = x*10 + int(c-'0')
		}
		return x
	}
	y, mo, d, h, mi, s := num(v[0:4]), num(v[5:7]), num(v[8:10]), num(v[11:13]), num(v[14:16]), num(v[17:19])
	if y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59 {
		return bad()
	}
	ns := 0
	if frac := v[19:]; len(frac) > 0 {
		if frac[0] != '.' || len(frac) < 2 || len(frac) > 10 {
			return bad()
		}
		f := num(frac[1:])
		if f < 0 {
			return bad()
		}
		ns = f
		for range 10 - len(frac) {
			ns *= 10
		}
	}
	return time.Date(y, time.Month(mo), d, h, mi, s, ns, time.UTC), nil
}

// appendTimestamp appends t's wall clock as YYYY-MM-DD HH:MM:SS.UUUUUU,
// what t.AppendFormat does with that layout, in a fraction of its time.
func appendTimestamp(b []byte, t time.Time) []byte {
	y, mo, d := t.Date()
	if y < 1 || y > 9999 {
		return t.AppendFormat(b, "2006-01-02 15:04:05.000000")
	}
	h, mi, s := t.Clock()
	b = appendDigits(b, y, 4)
	b = append(b, '-')
	b = appendDigits(b, int(mo), 2)
	b = append(b, '-')
	b = appendDigits(b, d, 2)
	b = append(b, ' ')
	b = appendDigits(b, h, 2)
	b = append(b, ':')
	b = appendDigits(b, mi, 2)
	b = append(b, ':')
	b = appendDigits(b, s, 2)
	b = append(b, '.')
	return appendDigits(b, t.Nanosecond()/1000, 6)
}

// appendDigits appends v (>= 0) in decimal, zero-padded to width digits.
func appendDigits(b []byte, v, width int) []byte {
	b = append(b, make([]byte, width)...)
	for i := len(b) - 1; i >= len(b)-width; i-- {
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return b
}
