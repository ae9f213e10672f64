package tpcc_test

import (
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// ClientSession is what a dialect returns for dialect.StyleClientSQL.
var _ dialect.Session = (*tpcc.ClientSession)(nil)
