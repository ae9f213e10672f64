package experiment

import (
	// Plans name targets by URL scheme: the dialects register them.
	_ "github.com/oltplab/oltplab/internal/dialect/mysql"
	_ "github.com/oltplab/oltplab/internal/dialect/postgres"
	_ "github.com/oltplab/oltplab/internal/dialect/sqlite"
)
