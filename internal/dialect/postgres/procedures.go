package postgres

import (
	"context"
	_ "embed"

	"github.com/jackc/pgx/v5"
)

// proceduresSQL creates the PL/pgSQL functions of the five transactions.
//
//go:embed procedures.sql
var proceduresSQL string

// procedureNames are the functions procedures.sql creates, for DropSchema.
var procedureNames = []string{
	"oltplab_new_order", "oltplab_payment", "oltplab_order_status", "oltplab_delivery",
	"oltplab_stock_level", "oltplab_customer_by_name", "oltplab_stock_quantity",
}

// The calls sessions make, one statement per transaction; pgx prepares each
// once per connection (its statement cache).
const (
	newOrderCall = "SELECT oltplab_new_order($1, $2, $3, $4, $5, $6, $7, $8, false)"
	// newOrderRollbackCall runs inside the caller's transaction and says
	// whether the function found the unused item and left the rollback to
	// the caller.
	newOrderRollbackCall = "SELECT oltplab_new_order($1, $2, $3, $4, $5, $6, $7, $8, true) IS NULL"
	paymentCall          = "SELECT oltplab_payment($1, $2, $3, $4, $5, $6, $7, $8, $9)"
	orderStatusCall      = "SELECT oltplab_order_status($1, $2, $3, $4, $5)"
	deliveryCall         = "SELECT oltplab_delivery($1, $2, $3)"
	stockLevelCall       = "SELECT oltplab_stock_level($1, $2, $3)"
)

// InstallProcedures creates (or replaces) the PL/pgSQL functions of the
// five transactions.
func (d *Database) InstallProcedures(ctx context.Context) error {
	return d.admin(ctx, "CREATE FUNCTION", func(c *pgx.Conn) error {
		_, err := c.Exec(ctx, proceduresSQL)
		return err
	})
}
