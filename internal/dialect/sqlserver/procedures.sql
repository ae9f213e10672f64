-- oltplab's TPC-C transactions as T-SQL stored procedures for SQL Server
-- (2008 and later) and Babelfish for PostgreSQL.
--
-- Conventions:
--  * Each procedure runs one explicit transaction, so that the database's
--    "Transactions/sec" counter counts one per call (oltplab's TPM source
--    on SQL Server), and SET XACT_ABORT ON: any error (a deadlock, 1205)
--    rolls the whole transaction back before it reaches the client, with
--    its own error number, and the caller's retry starts clean.
--  * A row that a transaction reads and then changes is locked by updating
--    it first and reading it after: correct under SQL Server's locking and
--    under PostgreSQL's MVCC with lock hints ignored (Babelfish ignores
--    UPDLOCK and HOLDLOCK). No hint is used.
--  * Written for SQL Server 2008 and for what Babelfish runs: no THROW, no
--    OFFSET/FETCH, no CONCAT, no variable assignment inside UPDATE ... SET,
--    no UPDATE ... OUTPUT into variables, no MERGE.
--  * Outputs are OUTPUT parameters (one RPC, one round trip, no result
--    set). New-Order's rollback on an unused item number (TPC-C 2.4.2.3)
--    is @rolled_back = 1 after the procedure's own ROLLBACK.
--  * A Payment's amount comes in cents, made exact MONEY here.
--
-- Batches are separated by lines holding only GO, as sqlcmd reads them;
-- InstallProcedures splits the file there.

-- TPC-C 2.4.2.2 New-Order. The order lines come as four comma-separated
-- lists of @ol_cnt entries each: line numbers, item ids, supply
-- warehouses, quantities. The caller sends them in the order of their
-- stock rows' keys (supply warehouse, item; lines of one row in line
-- order), so that New-Orders lock the stock rows they share in one order
-- and never deadlock on them; each line keeps its own OL_NUMBER.
CREATE PROCEDURE oltplab_new_order
	@w_id INT, @d_id INT, @c_id INT, @ol_cnt INT, @all_local INT,
	@ol_numbers VARCHAR(100), @i_ids VARCHAR(200), @supply_w_ids VARCHAR(200), @quantities VARCHAR(100), @entry_d DATETIME,
	@o_id INT OUTPUT, @total MONEY OUTPUT, @branded INT OUTPUT, @rolled_back INT OUTPUT
AS
BEGIN
	SET NOCOUNT ON;
	SET XACT_ABORT ON;
	DECLARE @w_tax SMALLMONEY, @d_tax SMALLMONEY, @c_discount SMALLMONEY;
	DECLARE @c_last VARCHAR(16), @c_credit CHAR(2);
	DECLARE @n INT, @ol_number INT, @i_id INT, @supply_w_id INT, @quantity INT;
	DECLARE @pn INT, @pi INT, @ps INT, @pq INT, @e INT;
	DECLARE @i_price MONEY, @i_data VARCHAR(50), @s_data VARCHAR(50), @dist_info CHAR(24);
	DECLARE @amount MONEY, @sum MONEY;
	SET @rolled_back = 0;
	SET @branded = 0;
	SET @sum = 0;

	BEGIN TRANSACTION;
	-- The warehouse row: W_TAX.
	SELECT @w_tax = w_tax FROM warehouse WHERE w_id = @w_id;
	-- The district row: D_NEXT_O_ID + 1 first (the row lock), then D_TAX
	-- and the order number it gave.
	UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = @w_id AND d_id = @d_id;
	SELECT @d_tax = d_tax, @o_id = d_next_o_id - 1 FROM district WHERE d_w_id = @w_id AND d_id = @d_id;
	-- The customer row: C_DISCOUNT, C_LAST, C_CREDIT.
	SELECT @c_discount = c_discount, @c_last = c_last, @c_credit = c_credit
		FROM customer WHERE c_w_id = @w_id AND c_d_id = @d_id AND c_id = @c_id;
	-- New ORDER and NEW-ORDER rows; O_CARRIER_ID null.
	INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
		VALUES (@o_id, @d_id, @w_id, @c_id, @entry_d, NULL, @ol_cnt, @all_local);
	INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (@o_id, @d_id, @w_id);

	SET @n = 1;
	SET @pn = 1;
	SET @pi = 1;
	SET @ps = 1;
	SET @pq = 1;
	WHILE @n <= @ol_cnt
	BEGIN
		SET @e = CHARINDEX(',', @ol_numbers + ',', @pn);
		SET @ol_number = CAST(SUBSTRING(@ol_numbers, @pn, @e - @pn) AS INT);
		SET @pn = @e + 1;
		SET @e = CHARINDEX(',', @i_ids + ',', @pi);
		SET @i_id = CAST(SUBSTRING(@i_ids, @pi, @e - @pi) AS INT);
		SET @pi = @e + 1;
		SET @e = CHARINDEX(',', @supply_w_ids + ',', @ps);
		SET @supply_w_id = CAST(SUBSTRING(@supply_w_ids, @ps, @e - @ps) AS INT);
		SET @ps = @e + 1;
		SET @e = CHARINDEX(',', @quantities + ',', @pq);
		SET @quantity = CAST(SUBSTRING(@quantities, @pq, @e - @pq) AS INT);
		SET @pq = @e + 1;

		-- The item row: I_PRICE, I_DATA. TPC-C 2.4.2.3: an unused item
		-- number rolls the whole transaction back.
		SET @i_price = NULL;
		SELECT @i_price = i_price, @i_data = i_data FROM item WHERE i_id = @i_id;
		IF @i_price IS NULL
		BEGIN
			ROLLBACK TRANSACTION;
			SET @rolled_back = 1;
			RETURN;
		END
		-- The stock row, updated first (the row lock): S_QUANTITY decreased
		-- by OL_QUANTITY if at least 10 remain, else increased by 91 after
		-- the decrease; S_YTD, S_ORDER_CNT, S_REMOTE_CNT. A row that several
		-- lines name is updated line after line.
		UPDATE stock SET
				s_quantity = CASE WHEN s_quantity >= @quantity + 10 THEN s_quantity - @quantity
					ELSE s_quantity - @quantity + 91 END,
				s_ytd = s_ytd + @quantity, s_order_cnt = s_order_cnt + 1,
				s_remote_cnt = s_remote_cnt + CASE WHEN @supply_w_id <> @w_id THEN 1 ELSE 0 END
			WHERE s_i_id = @i_id AND s_w_id = @supply_w_id;
		-- Then S_DATA and S_DIST_xx (xx = D_ID).
		SELECT @s_data = s_data, @dist_info = CASE @d_id
				WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
				WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
				WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
			FROM stock WHERE s_i_id = @i_id AND s_w_id = @supply_w_id;
		-- OL_AMOUNT = OL_QUANTITY * I_PRICE; OL_DELIVERY_D null.
		SET @amount = @quantity * @i_price;
		INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
				ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
			VALUES (@o_id, @d_id, @w_id, @ol_number, @i_id, @supply_w_id, NULL, @quantity, @amount, @dist_info);
		SET @sum = @sum + @amount;
		-- Brand-generic "B" when both I_DATA and S_DATA hold "ORIGINAL".
		IF CHARINDEX('ORIGINAL', @i_data) > 0 AND CHARINDEX('ORIGINAL', @s_data) > 0
			SET @branded = @branded + 1;
		SET @n = @n + 1;
	END
	COMMIT TRANSACTION;
	-- total-amount = sum(OL_AMOUNT) * (1 - C_DISCOUNT) * (1 + W_TAX + D_TAX).
	SET @total = @sum * (1 - @c_discount) * (1 + @w_tax + @d_tax);
END
GO

-- TPC-C 2.5.2.2 Payment. @by_name = 1 selects the customer by C_LAST: the
-- row at position ceil(n/2) of the n customers of that name sorted by
-- C_FIRST.
CREATE PROCEDURE oltplab_payment
	@w_id INT, @d_id INT, @c_w_id INT, @c_d_id INT, @c_id INT, @by_name INT, @c_last VARCHAR(16),
	@amount_cents BIGINT, @h_date DATETIME,
	@c_id_out INT OUTPUT, @c_balance MONEY OUTPUT
AS
BEGIN
	SET NOCOUNT ON;
	SET XACT_ABORT ON;
	DECLARE @amount MONEY, @amount_text VARCHAR(24);
	DECLARE @w_name VARCHAR(10), @d_name VARCHAR(10), @street_1 VARCHAR(20), @street_2 VARCHAR(20),
		@city VARCHAR(20), @state CHAR(2), @zip CHAR(9);
	DECLARE @n INT, @c_first VARCHAR(16), @c_middle CHAR(2), @c_phone CHAR(16), @c_since DATETIME,
		@c_credit CHAR(2), @c_credit_lim MONEY, @c_discount SMALLMONEY;
	SET @amount = CAST(@amount_cents AS MONEY) / 100;
	-- H_AMOUNT as C_DATA shows it: units, a point, two decimals.
	SET @amount_text = CAST(@amount_cents / 100 AS VARCHAR(20)) + '.' + RIGHT('0' + CAST(@amount_cents % 100 AS VARCHAR(2)), 2);

	BEGIN TRANSACTION;
	-- W_YTD += H_AMOUNT (the row lock), then W_NAME and the address.
	UPDATE warehouse SET w_ytd = w_ytd + @amount WHERE w_id = @w_id;
	SELECT @w_name = w_name, @street_1 = w_street_1, @street_2 = w_street_2, @city = w_city,
			@state = w_state, @zip = w_zip
		FROM warehouse WHERE w_id = @w_id;
	-- D_YTD += H_AMOUNT, then D_NAME and the address.
	UPDATE district SET d_ytd = d_ytd + @amount WHERE d_w_id = @w_id AND d_id = @d_id;
	SELECT @d_name = d_name, @street_1 = d_street_1, @street_2 = d_street_2, @city = d_city,
			@state = d_state, @zip = d_zip
		FROM district WHERE d_w_id = @w_id AND d_id = @d_id;
	-- The customer, by number or by last name.
	IF @by_name = 1
	BEGIN
		SELECT @n = COUNT(*) FROM customer WHERE c_w_id = @c_w_id AND c_d_id = @c_d_id AND c_last = @c_last;
		IF @n = 0
		BEGIN
			ROLLBACK TRANSACTION;
			RAISERROR('no customer of that last name', 16, 1);
			RETURN;
		END
		SELECT @c_id = c_id FROM (
				SELECT c_id, ROW_NUMBER() OVER (ORDER BY c_first, c_id) AS pos FROM customer
					WHERE c_w_id = @c_w_id AND c_d_id = @c_d_id AND c_last = @c_last) AS named
			WHERE pos = (@n + 1) / 2;
	END
	-- C_BALANCE -= H_AMOUNT, C_YTD_PAYMENT += H_AMOUNT, C_PAYMENT_CNT += 1
	-- (the row lock), then the customer's columns.
	UPDATE customer SET c_balance = c_balance - @amount, c_ytd_payment = c_ytd_payment + @amount,
			c_payment_cnt = c_payment_cnt + 1
		WHERE c_w_id = @c_w_id AND c_d_id = @c_d_id AND c_id = @c_id;
	SELECT @c_first = c_first, @c_middle = c_middle, @c_last = c_last, @street_1 = c_street_1,
			@street_2 = c_street_2, @city = c_city, @state = c_state, @zip = c_zip, @c_phone = c_phone,
			@c_since = c_since, @c_credit = c_credit, @c_credit_lim = c_credit_lim,
			@c_discount = c_discount, @c_balance = c_balance
		FROM customer WHERE c_w_id = @c_w_id AND c_d_id = @c_d_id AND c_id = @c_id;
	-- Bad credit: C_ID, C_D_ID, C_W_ID, D_ID, W_ID and H_AMOUNT inserted at
	-- the left of C_DATA, which never exceeds 500 characters.
	IF @c_credit = 'BC'
		UPDATE customer SET c_data = LEFT(CAST(@c_id AS VARCHAR(10)) + ' ' + CAST(@c_d_id AS VARCHAR(10)) + ' ' +
				CAST(@c_w_id AS VARCHAR(10)) + ' ' + CAST(@d_id AS VARCHAR(10)) + ' ' + CAST(@w_id AS VARCHAR(10)) + ' ' +
				@amount_text + ' ' + c_data, 500)
			WHERE c_w_id = @c_w_id AND c_d_id = @c_d_id AND c_id = @c_id;
	-- H_DATA is W_NAME and D_NAME separated by 4 spaces.
	INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
		VALUES (@c_id, @c_d_id, @c_w_id, @d_id, @w_id, @h_date, @amount, @w_name + '    ' + @d_name);
	COMMIT TRANSACTION;
	SET @c_id_out = @c_id;
END
GO

-- TPC-C 2.6.2.2 Order-Status (read-only): the customer, its last order and
-- that order's lines (returned as their count).
CREATE PROCEDURE oltplab_order_status
	@w_id INT, @d_id INT, @by_name INT, @c_last VARCHAR(16), @c_id INT,
	@c_id_out INT OUTPUT, @c_balance MONEY OUTPUT, @o_id INT OUTPUT, @lines INT OUTPUT
AS
BEGIN
	SET NOCOUNT ON;
	SET XACT_ABORT ON;
	DECLARE @n INT, @c_first VARCHAR(16), @c_middle CHAR(2), @o_entry_d DATETIME, @o_carrier_id INT;
	DECLARE @quantity INT, @amount MONEY, @delivery_d DATETIME;

	BEGIN TRANSACTION;
	IF @by_name = 1
	BEGIN
		SELECT @n = COUNT(*) FROM customer WHERE c_w_id = @w_id AND c_d_id = @d_id AND c_last = @c_last;
		IF @n = 0
		BEGIN
			ROLLBACK TRANSACTION;
			RAISERROR('no customer of that last name', 16, 1);
			RETURN;
		END
		SELECT @c_id = c_id FROM (
				SELECT c_id, ROW_NUMBER() OVER (ORDER BY c_first, c_id) AS pos FROM customer
					WHERE c_w_id = @w_id AND c_d_id = @d_id AND c_last = @c_last) AS named
			WHERE pos = (@n + 1) / 2;
	END
	SELECT @c_balance = c_balance, @c_first = c_first, @c_middle = c_middle, @c_last = c_last
		FROM customer WHERE c_w_id = @w_id AND c_d_id = @d_id AND c_id = @c_id;
	-- The customer's order with the largest O_ID.
	SELECT TOP (1) @o_id = o_id, @o_entry_d = o_entry_d, @o_carrier_id = o_carrier_id
		FROM orders WHERE o_w_id = @w_id AND o_d_id = @d_id AND o_c_id = @c_id
		ORDER BY o_id DESC;
	-- Its lines: OL_I_ID, OL_SUPPLY_W_ID, OL_QUANTITY, OL_AMOUNT, OL_DELIVERY_D.
	SELECT @lines = COUNT(ol_i_id + ol_supply_w_id), @quantity = SUM(ol_quantity), @amount = SUM(ol_amount),
			@delivery_d = MAX(ol_delivery_d)
		FROM order_line WHERE ol_w_id = @w_id AND ol_d_id = @d_id AND ol_o_id = @o_id;
	COMMIT TRANSACTION;
	SET @c_id_out = @c_id;
END
GO

-- TPC-C 2.7.4.2 Delivery: the ten districts of one warehouse in one
-- transaction. A district without an undelivered order is skipped and
-- counted; so is one whose oldest order a concurrent Delivery took first
-- (its NEW-ORDER row was gone when this one deleted it).
CREATE PROCEDURE oltplab_delivery
	@w_id INT, @carrier_id INT, @delivery_d DATETIME,
	@skipped INT OUTPUT
AS
BEGIN
	SET NOCOUNT ON;
	SET XACT_ABORT ON;
	DECLARE @d_id INT, @o_id INT, @c_id INT, @amount MONEY;
	SET @skipped = 0;
	SET @d_id = 1;

	BEGIN TRANSACTION;
	WHILE @d_id <= 10
	BEGIN
		-- The oldest undelivered order of the district.
		SET @o_id = NULL;
		SELECT TOP (1) @o_id = no_o_id FROM new_order
			WHERE no_w_id = @w_id AND no_d_id = @d_id ORDER BY no_o_id;
		IF @o_id IS NULL
			SET @skipped = @skipped + 1;
		ELSE
		BEGIN
			DELETE FROM new_order WHERE no_w_id = @w_id AND no_d_id = @d_id AND no_o_id = @o_id;
			IF @@ROWCOUNT = 0
				SET @skipped = @skipped + 1;
			ELSE
			BEGIN
				-- O_CARRIER_ID set (the row lock), then O_C_ID.
				UPDATE orders SET o_carrier_id = @carrier_id WHERE o_w_id = @w_id AND o_d_id = @d_id AND o_id = @o_id;
				SELECT @c_id = o_c_id FROM orders WHERE o_w_id = @w_id AND o_d_id = @d_id AND o_id = @o_id;
				-- Every line gets OL_DELIVERY_D; the sum of their OL_AMOUNT.
				UPDATE order_line SET ol_delivery_d = @delivery_d
					WHERE ol_w_id = @w_id AND ol_d_id = @d_id AND ol_o_id = @o_id;
				SELECT @amount = COALESCE(SUM(ol_amount), 0) FROM order_line
					WHERE ol_w_id = @w_id AND ol_d_id = @d_id AND ol_o_id = @o_id;
				-- C_BALANCE += the sum, C_DELIVERY_CNT += 1.
				UPDATE customer SET c_balance = c_balance + @amount, c_delivery_cnt = c_delivery_cnt + 1
					WHERE c_w_id = @w_id AND c_d_id = @d_id AND c_id = @c_id;
			END
		END
		SET @d_id = @d_id + 1;
	END
	COMMIT TRANSACTION;
END
GO

-- TPC-C 2.8.2.2 Stock-Level (read-only): distinct items of the district's
-- last 20 orders whose stock is below the threshold.
CREATE PROCEDURE oltplab_stock_level
	@w_id INT, @d_id INT, @threshold INT,
	@low INT OUTPUT
AS
BEGIN
	SET NOCOUNT ON;
	SET XACT_ABORT ON;
	DECLARE @next_o_id INT;

	BEGIN TRANSACTION;
	SELECT @next_o_id = d_next_o_id FROM district WHERE d_w_id = @w_id AND d_id = @d_id;
	SELECT @low = COUNT(DISTINCT s_i_id)
		FROM order_line JOIN stock ON s_i_id = ol_i_id
		WHERE ol_w_id = @w_id AND ol_d_id = @d_id AND ol_o_id < @next_o_id AND ol_o_id >= @next_o_id - 20
			AND s_w_id = @w_id AND s_quantity < @threshold;
	COMMIT TRANSACTION;
END
GO
