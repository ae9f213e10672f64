-- oltplab's five TPC-C transactions as PL/pgSQL functions. Each call is one
-- transaction (the caller runs it in autocommit), with the semantics of the
-- transaction profiles of TPC-C clauses 2.4.2, 2.5.2, 2.6.2, 2.7.4 and 2.8.2.
-- Installed by internal/dialect/postgres (procedures.go); DropSchema drops
-- them by name.

-- New-Order (TPC-C 2.4.2.2). The items come as three arrays of equal
-- length: item numbers, supplying warehouses and quantities, in order-line
-- order. Returns the total amount of the order (2.4.2.2, output of
-- 2.4.3.3).
--
-- An unused item number (2.4.2.3) rolls back everything the transaction
-- did. When the caller says it will roll back (p_caller_rolls_back: the
-- input is one of the 1% the terminal chose to roll back, 2.4.1.4, and
-- the call runs inside the caller's BEGIN), the function returns NULL and
-- the caller ends the transaction with ROLLBACK: an expected outcome, so
-- the server logs no error for it. Otherwise the unused item raises
-- SQLSTATE TP001, which rolls the call back.
DROP FUNCTION IF EXISTS oltplab_new_order(INTEGER, INTEGER, INTEGER, INTEGER[], INTEGER[], INTEGER[], INTEGER, TIMESTAMP);
CREATE OR REPLACE FUNCTION oltplab_new_order(
	p_w_id INTEGER, p_d_id INTEGER, p_c_id INTEGER,
	p_i_ids INTEGER[], p_supply_w_ids INTEGER[], p_quantities INTEGER[],
	p_all_local INTEGER, p_entry_d TIMESTAMP, p_caller_rolls_back BOOLEAN)
RETURNS NUMERIC
LANGUAGE plpgsql AS $$
DECLARE
	v_ol_cnt INTEGER := cardinality(p_i_ids);
	v_w_tax NUMERIC(4,4);
	v_d_tax NUMERIC(4,4);
	v_o_id INTEGER;
	v_c_discount NUMERIC(4,4);
	v_c_last VARCHAR(16);
	v_c_credit CHAR(2);
	v_i_price NUMERIC(5,2);
	v_i_name VARCHAR(24);
	v_i_data VARCHAR(50);
	v_s_quantity INTEGER;
	v_s_data VARCHAR(50);
	v_dist_info CHAR(24);
	v_quantity INTEGER;
	v_supply_w_id INTEGER;
	v_ol_amount NUMERIC(6,2);
	v_sum NUMERIC(12,2) := 0;
	v_brand_generic CHAR(1);
BEGIN
	-- The warehouse tax rate.
	SELECT w_tax INTO v_w_tax FROM warehouse WHERE w_id = p_w_id;
	-- The district tax rate and next available order number, which is
	-- incremented by one.
	UPDATE district SET d_next_o_id = d_next_o_id + 1
	 WHERE d_w_id = p_w_id AND d_id = p_d_id
	 RETURNING d_tax, d_next_o_id - 1 INTO v_d_tax, v_o_id;
	IF NOT FOUND THEN
		RAISE EXCEPTION USING ERRCODE = 'no_data_found',
			MESSAGE = format('new-order: no district %s of warehouse %s', p_d_id, p_w_id);
	END IF;
	-- The customer's discount rate, last name and credit status.
	SELECT c_discount, c_last, c_credit INTO v_c_discount, v_c_last, v_c_credit
	  FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
	-- A new row in NEW-ORDER and in ORDER: O_CARRIER_ID is null, O_OL_CNT
	-- the number of items, O_ALL_LOCAL whether every line is supplied by
	-- the home warehouse.
	INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o_id, p_d_id, p_w_id);
	INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
	VALUES (v_o_id, p_d_id, p_w_id, p_c_id, p_entry_d, NULL, v_ol_cnt, p_all_local);
	FOR i IN 1 .. v_ol_cnt LOOP
		v_quantity := p_quantities[i];
		v_supply_w_id := p_supply_w_ids[i];
		-- The item's price, name and data.
		SELECT i_price, i_name, i_data INTO v_i_price, v_i_name, v_i_data
		  FROM item WHERE i_id = p_i_ids[i];
		IF NOT FOUND THEN
			-- TPC-C 2.4.2.3: an unused item number rolls the whole
			-- transaction back: the caller's ROLLBACK when it said it
			-- would, else the error.
			IF p_caller_rolls_back THEN
				RETURN NULL;
			END IF;
			RAISE EXCEPTION USING ERRCODE = 'TP001',
				MESSAGE = format('new-order: item number %s is not used (TPC-C 2.4.2.3)', p_i_ids[i]);
		END IF;
		-- The stock of the item at the supplying warehouse: S_QUANTITY is
		-- decreased by OL_QUANTITY when it exceeds it by 10 or more, else
		-- set to S_QUANTITY - OL_QUANTITY + 91; S_YTD grows by OL_QUANTITY,
		-- S_ORDER_CNT by one, and S_REMOTE_CNT by one for a remote supplier.
		-- S_DIST_xx of the order's district becomes OL_DIST_INFO.
		UPDATE stock SET
			s_quantity = CASE WHEN s_quantity >= v_quantity + 10 THEN s_quantity - v_quantity
				ELSE s_quantity - v_quantity + 91 END,
			s_ytd = s_ytd + v_quantity,
			s_order_cnt = s_order_cnt + 1,
			s_remote_cnt = s_remote_cnt + CASE WHEN v_supply_w_id <> p_w_id THEN 1 ELSE 0 END
		 WHERE s_i_id = p_i_ids[i] AND s_w_id = v_supply_w_id
		 RETURNING s_quantity, s_data,
			CASE p_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
				WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06
				WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09
				ELSE s_dist_10 END
		  INTO v_s_quantity, v_s_data, v_dist_info;
		IF NOT FOUND THEN
			RAISE EXCEPTION USING ERRCODE = 'no_data_found',
				MESSAGE = format('new-order: no stock of item %s at warehouse %s', p_i_ids[i], v_supply_w_id);
		END IF;
		-- Brand or generic, for the terminal output.
		IF strpos(v_i_data, 'ORIGINAL') > 0 AND strpos(v_s_data, 'ORIGINAL') > 0 THEN
			v_brand_generic := 'B';
		ELSE
			v_brand_generic := 'G';
		END IF;
		-- OL_AMOUNT = OL_QUANTITY * I_PRICE; the order line is inserted with
		-- a null OL_DELIVERY_D.
		v_ol_amount := v_quantity * v_i_price;
		INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
			ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
		VALUES (v_o_id, p_d_id, p_w_id, i, p_i_ids[i], v_supply_w_id,
			NULL, v_quantity, v_ol_amount, v_dist_info);
		v_sum := v_sum + v_ol_amount;
	END LOOP;
	-- The total amount: sum(OL_AMOUNT) * (1 - C_DISCOUNT) * (1 + W_TAX + D_TAX).
	RETURN round(v_sum * (1 - v_c_discount) * (1 + v_w_tax + v_d_tax), 2);
END
$$;

-- oltplab_customer_by_name returns the C_ID of the customer at position
-- ceil(n/2) among the n customers of the district with last name p_c_last,
-- sorted by C_FIRST (TPC-C 2.5.2.2, 2.6.2.2).
CREATE OR REPLACE FUNCTION oltplab_customer_by_name(p_w_id INTEGER, p_d_id INTEGER, p_c_last VARCHAR)
RETURNS INTEGER
LANGUAGE plpgsql AS $$
DECLARE
	v_ids INTEGER[];
BEGIN
	SELECT array_agg(c_id ORDER BY c_first) INTO v_ids
	  FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last;
	IF v_ids IS NULL THEN
		RAISE EXCEPTION USING ERRCODE = 'no_data_found',
			MESSAGE = format('no customer named %s in district %s of warehouse %s', p_c_last, p_d_id, p_w_id);
	END IF;
	RETURN v_ids[(cardinality(v_ids) + 1) / 2];
END
$$;

-- Payment (TPC-C 2.5.2.2). The customer is chosen by number, or by last
-- name when p_by_name. The amount comes in cents. Returns the customer's
-- C_ID.
CREATE OR REPLACE FUNCTION oltplab_payment(
	p_w_id INTEGER, p_d_id INTEGER, p_c_w_id INTEGER, p_c_d_id INTEGER,
	p_c_id INTEGER, p_by_name BOOLEAN, p_c_last VARCHAR,
	p_h_amount_cents BIGINT, p_h_date TIMESTAMP)
RETURNS INTEGER
LANGUAGE plpgsql AS $$
DECLARE
	v_amount NUMERIC(6,2) := p_h_amount_cents / 100.0;
	v_c_id INTEGER := p_c_id;
	v_w_name VARCHAR(10);
	v_w_street_1 VARCHAR(20);
	v_w_street_2 VARCHAR(20);
	v_w_city VARCHAR(20);
	v_w_state CHAR(2);
	v_w_zip CHAR(9);
	v_d_name VARCHAR(10);
	v_d_street_1 VARCHAR(20);
	v_d_street_2 VARCHAR(20);
	v_d_city VARCHAR(20);
	v_d_state CHAR(2);
	v_d_zip CHAR(9);
	v_c_first VARCHAR(16);
	v_c_middle CHAR(2);
	v_c_last VARCHAR(16);
	v_c_phone CHAR(16);
	v_c_since TIMESTAMP;
	v_c_credit CHAR(2);
	v_c_credit_lim NUMERIC(12,2);
	v_c_discount NUMERIC(4,4);
	v_c_balance NUMERIC(12,2);
BEGIN
	-- W_YTD grows by H_AMOUNT; the warehouse's name and address are read.
	UPDATE warehouse SET w_ytd = w_ytd + v_amount WHERE w_id = p_w_id
	 RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip
	  INTO v_w_name, v_w_street_1, v_w_street_2, v_w_city, v_w_state, v_w_zip;
	IF NOT FOUND THEN
		RAISE EXCEPTION USING ERRCODE = 'no_data_found', MESSAGE = format('payment: no warehouse %s', p_w_id);
	END IF;
	-- D_YTD grows by H_AMOUNT; the district's name and address are read.
	UPDATE district SET d_ytd = d_ytd + v_amount WHERE d_w_id = p_w_id AND d_id = p_d_id
	 RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip
	  INTO v_d_name, v_d_street_1, v_d_street_2, v_d_city, v_d_state, v_d_zip;
	IF NOT FOUND THEN
		RAISE EXCEPTION USING ERRCODE = 'no_data_found',
			MESSAGE = format('payment: no district %s of warehouse %s', p_d_id, p_w_id);
	END IF;
	IF p_by_name THEN
		v_c_id := oltplab_customer_by_name(p_c_w_id, p_c_d_id, p_c_last);
	END IF;
	-- C_BALANCE decreases by H_AMOUNT, C_YTD_PAYMENT grows by it and
	-- C_PAYMENT_CNT by one. For bad credit ("BC") C_ID, C_D_ID, C_W_ID,
	-- D_ID, W_ID and H_AMOUNT are inserted at the left of C_DATA, which
	-- keeps at most 500 characters.
	UPDATE customer SET
		c_balance = c_balance - v_amount,
		c_ytd_payment = c_ytd_payment + v_amount,
		c_payment_cnt = c_payment_cnt + 1,
		c_data = CASE WHEN c_credit = 'BC'
			THEN left(format('%s %s %s %s %s %s ', v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, v_amount) || c_data, 500)
			ELSE c_data END
	 WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id
	 RETURNING c_first, c_middle, c_last, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance
	  INTO v_c_first, v_c_middle, v_c_last, v_c_phone, v_c_since, v_c_credit, v_c_credit_lim, v_c_discount, v_c_balance;
	IF NOT FOUND THEN
		RAISE EXCEPTION USING ERRCODE = 'no_data_found',
			MESSAGE = format('payment: no customer %s in district %s of warehouse %s', v_c_id, p_c_d_id, p_c_w_id);
	END IF;
	-- A new HISTORY row; H_DATA is W_NAME and D_NAME separated by four spaces.
	INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
	VALUES (v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, p_h_date, v_amount, v_w_name || '    ' || v_d_name);
	RETURN v_c_id;
END
$$;

-- Order-Status (TPC-C 2.6.2.2). The customer is chosen by number, or by
-- last name when p_by_name. Reads the customer's last order and its order
-- lines; returns the number of order lines.
CREATE OR REPLACE FUNCTION oltplab_order_status(
	p_w_id INTEGER, p_d_id INTEGER, p_c_id INTEGER, p_by_name BOOLEAN, p_c_last VARCHAR)
RETURNS INTEGER
LANGUAGE plpgsql AS $$
DECLARE
	v_c_id INTEGER := p_c_id;
	v_c_balance NUMERIC(12,2);
	v_c_first VARCHAR(16);
	v_c_middle CHAR(2);
	v_c_last VARCHAR(16);
	v_o_id INTEGER;
	v_o_entry_d TIMESTAMP;
	v_o_carrier_id INTEGER;
	v_line RECORD;
	v_lines INTEGER := 0;
BEGIN
	IF p_by_name THEN
		v_c_id := oltplab_customer_by_name(p_w_id, p_d_id, p_c_last);
	END IF;
	SELECT c_balance, c_first, c_middle, c_last INTO v_c_balance, v_c_first, v_c_middle, v_c_last
	  FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = v_c_id;
	IF NOT FOUND THEN
		RAISE EXCEPTION USING ERRCODE = 'no_data_found',
			MESSAGE = format('order-status: no customer %s in district %s of warehouse %s', v_c_id, p_d_id, p_w_id);
	END IF;
	-- The customer's order with the largest O_ID.
	SELECT o_id, o_entry_d, o_carrier_id INTO v_o_id, v_o_entry_d, v_o_carrier_id
	  FROM orders WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = v_c_id
	 ORDER BY o_id DESC LIMIT 1;
	IF NOT FOUND THEN
		RAISE EXCEPTION USING ERRCODE = 'no_data_found',
			MESSAGE = format('order-status: customer %s of district %s of warehouse %s has no order', v_c_id, p_d_id, p_w_id);
	END IF;
	-- Every order line of that order.
	FOR v_line IN
		SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d
		  FROM order_line WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = v_o_id
	LOOP
		v_lines := v_lines + 1;
	END LOOP;
	RETURN v_lines;
END
$$;

-- Delivery (TPC-C 2.7.4.2): for each of the ten districts of the
-- warehouse, the oldest undelivered order is delivered; a district without
-- one is skipped. Returns the number of skipped districts.
--
-- The oldest NEW-ORDER row is locked with FOR UPDATE (never SKIP LOCKED,
-- which would deliver a younger order while an older one is undelivered).
-- When a concurrent Delivery deleted the row this one waited for,
-- PostgreSQL's LockRows step drops that row and takes the next one of the
-- same scan, so the next oldest order is delivered instead.
CREATE OR REPLACE FUNCTION oltplab_delivery(p_w_id INTEGER, p_carrier_id INTEGER, p_delivery_d TIMESTAMP)
RETURNS INTEGER
LANGUAGE plpgsql AS $$
DECLARE
	v_skipped INTEGER := 0;
	v_o_id INTEGER;
	v_c_id INTEGER;
	v_amount NUMERIC(12,2);
BEGIN
	FOR v_d_id IN 1 .. 10 LOOP
		SELECT no_o_id INTO v_o_id FROM new_order
		 WHERE no_w_id = p_w_id AND no_d_id = v_d_id
		 ORDER BY no_o_id LIMIT 1 FOR UPDATE;
		IF NOT FOUND THEN
			v_skipped := v_skipped + 1;
			CONTINUE;
		END IF;
		DELETE FROM new_order WHERE no_w_id = p_w_id AND no_d_id = v_d_id AND no_o_id = v_o_id;
		-- The order's O_CARRIER_ID is set and its customer read.
		UPDATE orders SET o_carrier_id = p_carrier_id
		 WHERE o_w_id = p_w_id AND o_d_id = v_d_id AND o_id = v_o_id
		 RETURNING o_c_id INTO v_c_id;
		-- Every order line gets OL_DELIVERY_D; their amounts are summed.
		WITH delivered AS (
			UPDATE order_line SET ol_delivery_d = p_delivery_d
			 WHERE ol_w_id = p_w_id AND ol_d_id = v_d_id AND ol_o_id = v_o_id
			 RETURNING ol_amount)
		SELECT sum(ol_amount) INTO v_amount FROM delivered;
		-- C_BALANCE grows by the sum and C_DELIVERY_CNT by one.
		UPDATE customer SET c_balance = c_balance + v_amount, c_delivery_cnt = c_delivery_cnt + 1
		 WHERE c_w_id = p_w_id AND c_d_id = v_d_id AND c_id = v_c_id;
	END LOOP;
	RETURN v_skipped;
END
$$;

-- Stock-Level (TPC-C 2.8.2.2): the number of distinct items of the
-- district's last 20 orders whose stock at the warehouse is below
-- p_threshold.
CREATE OR REPLACE FUNCTION oltplab_stock_level(p_w_id INTEGER, p_d_id INTEGER, p_threshold INTEGER)
RETURNS INTEGER
LANGUAGE plpgsql AS $$
DECLARE
	v_next_o_id INTEGER;
	v_low_stock INTEGER;
BEGIN
	SELECT d_next_o_id INTO v_next_o_id FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
	IF NOT FOUND THEN
		RAISE EXCEPTION USING ERRCODE = 'no_data_found',
			MESSAGE = format('stock-level: no district %s of warehouse %s', p_d_id, p_w_id);
	END IF;
	SELECT count(DISTINCT s_i_id) INTO v_low_stock
	  FROM order_line JOIN stock ON s_w_id = p_w_id AND s_i_id = ol_i_id
	 WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id
	   AND ol_o_id < v_next_o_id AND ol_o_id >= v_next_o_id - 20
	   AND s_quantity < p_threshold;
	RETURN v_low_stock;
END
$$;
