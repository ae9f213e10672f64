-- oltplab's TPC-C transactions as stored procedures for MariaDB (10.3+) and
-- MySQL (8.0+). Only syntax common to both is used.
--
-- Conventions:
--  * Each procedure runs one explicit START TRANSACTION ... COMMIT, so that
--    the server's Com_commit / Com_rollback count it (oltplab's TPM source,
--    as HammerDB's for MySQL).
--  * Every error rolls the whole transaction back before it reaches the
--    client (EXIT HANDLER: ROLLBACK; RESIGNAL). This matters for a lock wait
--    timeout (error 1205), after which InnoDB by default rolls back only the
--    statement: the caller's retry must start clean.
--  * New-Order's unused item number (TPC-C 2.4.2.3) is
--    SIGNAL SQLSTATE 'OLRB1' SET MYSQL_ERRNO = 30001: the handler rolls back
--    (counted in Com_rollback) and the session maps 30001 to tpcc.ErrRollback.
--  * No customer of the requested last name: SQLSTATE 'OLNC1', errno 30002.
--  * Outputs come back as one result row (SELECT at the end, after COMMIT):
--    one round trip per transaction.
--  * Money arguments are integer cents, turned into exact DECIMAL here.
--
-- The file is also valid input for the mysql/mariadb command-line client.
-- InstallProcedures splits it on the lines holding only "$$".

DELIMITER $$

-- TPC-C 2.4.2.2 New-Order. The order lines come as three comma-separated
-- lists of equal length p_ol_cnt: item ids, supply warehouses, quantities.
-- The lines are handled together (JSON_TABLE turns the lists into rows):
-- three statements whatever the number of lines, where four per line cost
-- about a quarter more server CPU per call (measured side by side on one
-- MariaDB 10.11: each statement of a stored program opens and locks its
-- tables anew). Only the item list goes through JSON_TABLE; a line's
-- supply warehouse and quantity are read from the other two lists at its
-- position. Three JSON_TABLEs joined on their ordinality scanned each
-- other's rows (Handler_read_rnd_next 101 per call against 68, for one
-- more small temporary table) and cost about 3 % more server CPU per
-- call: five comparisons side by side on one MariaDB 10.11, alternating
-- blocks of 300-400 calls, four in favour of the single JSON_TABLE.
CREATE PROCEDURE oltplab_new_order(
	IN p_w_id INT, IN p_d_id INT, IN p_c_id INT, IN p_ol_cnt INT, IN p_all_local INT,
	IN p_i_ids VARCHAR(256), IN p_supply_w_ids VARCHAR(256), IN p_quantities VARCHAR(128),
	IN p_entry_d DATETIME)
BEGIN
	DECLARE v_w_tax, v_d_tax, v_c_discount DECIMAL(4,4);
	DECLARE v_c_last VARCHAR(16);
	DECLARE v_c_credit CHAR(2);
	DECLARE v_o_id, v_lines INT;
	DECLARE v_sum DECIMAL(12,2);
	DECLARE v_branded INT;
	DECLARE v_w_json, v_q_json VARCHAR(260);
	DECLARE EXIT HANDLER FOR SQLEXCEPTION
	BEGIN
		ROLLBACK;
		RESIGNAL;
	END;

	SET v_w_json = CONCAT('[', p_supply_w_ids, ']'), v_q_json = CONCAT('[', p_quantities, ']');
	START TRANSACTION;
	-- The warehouse row: W_TAX.
	SELECT w_tax INTO v_w_tax FROM warehouse WHERE w_id = p_w_id;
	-- The district row: D_TAX, D_NEXT_O_ID, then D_NEXT_O_ID + 1.
	SELECT d_tax, d_next_o_id INTO v_d_tax, v_o_id
		FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id FOR UPDATE;
	UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w_id AND d_id = p_d_id;
	-- The customer row: C_DISCOUNT, C_LAST, C_CREDIT.
	SELECT c_discount, c_last, c_credit INTO v_c_discount, v_c_last, v_c_credit
		FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
	-- New ORDER and NEW-ORDER rows; O_CARRIER_ID null.
	INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
		VALUES (v_o_id, p_d_id, p_w_id, p_c_id, p_entry_d, NULL, p_ol_cnt, p_all_local);
	INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o_id, p_d_id, p_w_id);

	-- The stock rows (S_I_ID = OL_I_ID, S_W_ID = OL_SUPPLY_W_ID), each once,
	-- in key order: S_QUANTITY decreased by OL_QUANTITY when it exceeds it
	-- by 10 or more, else decreased by OL_QUANTITY and increased by 91 (a row
	-- that several lines name: line after line, oltplab_stock_quantity);
	-- S_YTD += OL_QUANTITY, S_ORDER_CNT += 1, S_REMOTE_CNT += 1 for a remote
	-- supplier, per line.
	UPDATE stock JOIN (
		SELECT l_w_id, l_i_id, COUNT(*) AS g_cnt, SUM(l_qty) AS g_qty
		  FROM (SELECT l_n, l_i_id, CAST(JSON_EXTRACT(v_w_json, CONCAT('$[', l_n - 1, ']')) AS SIGNED) AS l_w_id,
				CAST(JSON_EXTRACT(v_q_json, CONCAT('$[', l_n - 1, ']')) AS SIGNED) AS l_qty
			  FROM JSON_TABLE(CONCAT('[', p_i_ids, ']'), '$[*]' COLUMNS (l_n FOR ORDINALITY, l_i_id INT PATH '$')) AS li) AS l
		 GROUP BY l_w_id, l_i_id ORDER BY l_w_id, l_i_id) AS g ON s_w_id = l_w_id AND s_i_id = l_i_id
	   SET s_quantity = IF(g_cnt > 1, oltplab_stock_quantity(s_quantity, l_w_id, l_i_id, p_i_ids, p_supply_w_ids, p_quantities),
			IF(s_quantity >= g_qty + 10, s_quantity - g_qty, s_quantity - g_qty + 91)),
		s_ytd = s_ytd + g_qty, s_order_cnt = s_order_cnt + g_cnt,
		s_remote_cnt = s_remote_cnt + IF(l_w_id <> p_w_id, g_cnt, 0);
	-- The item rows: I_PRICE; the lines: OL_AMOUNT = OL_QUANTITY * I_PRICE,
	-- OL_DIST_INFO = S_DIST_xx (xx = D_ID), OL_DELIVERY_D null.
	INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
			ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
		SELECT v_o_id, p_d_id, p_w_id, l_n, l_i_id, l_w_id, NULL, l_qty, l_qty * i_price,
			ELT(p_d_id, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05,
				s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10)
		  FROM (SELECT l_n, l_i_id, CAST(JSON_EXTRACT(v_w_json, CONCAT('$[', l_n - 1, ']')) AS SIGNED) AS l_w_id,
				CAST(JSON_EXTRACT(v_q_json, CONCAT('$[', l_n - 1, ']')) AS SIGNED) AS l_qty
			  FROM JSON_TABLE(CONCAT('[', p_i_ids, ']'), '$[*]' COLUMNS (l_n FOR ORDINALITY, l_i_id INT PATH '$')) AS li) AS l
		  JOIN item ON i_id = l_i_id
		  JOIN stock ON s_w_id = l_w_id AND s_i_id = l_i_id;
	SET v_lines = ROW_COUNT();
	IF v_lines < p_ol_cnt THEN
		SELECT COUNT(*) INTO v_lines
		  FROM JSON_TABLE(CONCAT('[', p_i_ids, ']'), '$[*]' COLUMNS (l_i_id INT PATH '$')) AS li
		  JOIN item ON i_id = l_i_id;
		-- TPC-C 2.4.2.3: an unused item number rolls the whole transaction back.
		IF v_lines < p_ol_cnt THEN
			SIGNAL SQLSTATE 'OLRB1' SET MYSQL_ERRNO = 30001, MESSAGE_TEXT = 'new-order rolled back on an unused item number (TPC-C 2.4.2.3)';
		END IF;
		SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'new-order: a stock row of the order is missing';
	END IF;
	-- sum(OL_AMOUNT); brand-generic "B" when both I_DATA and S_DATA hold "ORIGINAL".
	SELECT SUM(ol_amount), SUM(INSTR(i_data, 'ORIGINAL') > 0 AND INSTR(s_data, 'ORIGINAL') > 0)
		INTO v_sum, v_branded
		FROM order_line JOIN item ON i_id = ol_i_id JOIN stock ON s_w_id = ol_supply_w_id AND s_i_id = ol_i_id
		WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = v_o_id;
	COMMIT;
	-- O_ID, total-amount = sum(OL_AMOUNT) * (1 - C_DISCOUNT) * (1 + W_TAX + D_TAX), brand-generic "B" lines.
	SELECT v_o_id, ROUND(v_sum * (1 - v_c_discount) * (1 + v_w_tax + v_d_tax), 2), v_branded;
END
$$

-- TPC-C 2.5.2.2 Payment. p_by_name selects the customer by C_LAST: the row
-- at position ceil(n/2) of the n customers of that name sorted by C_FIRST.
CREATE PROCEDURE oltplab_payment(
	IN p_w_id INT, IN p_d_id INT, IN p_c_w_id INT, IN p_c_d_id INT, IN p_c_id INT,
	IN p_by_name INT, IN p_c_last VARCHAR(16) CHARACTER SET utf8mb4, IN p_amount_cents BIGINT,
	IN p_h_date DATETIME)
BEGIN
	DECLARE v_amount DECIMAL(6,2);
	DECLARE v_w_name, v_d_name VARCHAR(10);
	DECLARE v_street_1, v_street_2, v_city VARCHAR(20);
	DECLARE v_state CHAR(2);
	DECLARE v_zip CHAR(9);
	DECLARE v_n, v_c_id INT;
	DECLARE v_c_first, v_c_last VARCHAR(16);
	DECLARE v_c_middle, v_c_credit CHAR(2);
	DECLARE v_c_phone CHAR(16);
	DECLARE v_c_since DATETIME;
	DECLARE v_c_credit_lim, v_c_balance DECIMAL(12,2);
	DECLARE v_c_discount DECIMAL(4,4);
	DECLARE EXIT HANDLER FOR SQLEXCEPTION
	BEGIN
		ROLLBACK;
		RESIGNAL;
	END;

	SET v_amount = p_amount_cents / 100;
	START TRANSACTION;
	-- W_YTD += H_AMOUNT; W_NAME and the address.
	UPDATE warehouse SET w_ytd = w_ytd + v_amount WHERE w_id = p_w_id;
	SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip
		INTO v_w_name, v_street_1, v_street_2, v_city, v_state, v_zip
		FROM warehouse WHERE w_id = p_w_id;
	-- D_YTD += H_AMOUNT; D_NAME and the address.
	UPDATE district SET d_ytd = d_ytd + v_amount WHERE d_w_id = p_w_id AND d_id = p_d_id;
	SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip
		INTO v_d_name, v_street_1, v_street_2, v_city, v_state, v_zip
		FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
	-- The customer, by number or by last name.
	IF p_by_name THEN
		SELECT COUNT(*) INTO v_n FROM customer
			WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = p_c_last COLLATE utf8mb4_bin;
		IF v_n = 0 THEN
			SIGNAL SQLSTATE 'OLNC1' SET MYSQL_ERRNO = 30002, MESSAGE_TEXT = 'no customer of that last name';
		END IF;
		SET v_n = (v_n + 1) DIV 2 - 1;
		SELECT c_id INTO v_c_id FROM customer
			WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = p_c_last COLLATE utf8mb4_bin
			ORDER BY c_first LIMIT v_n, 1;
	ELSE
		SET v_c_id = p_c_id;
	END IF;
	SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone,
			c_since, c_credit, c_credit_lim, c_discount, c_balance
		INTO v_c_first, v_c_middle, v_c_last, v_street_1, v_street_2, v_city, v_state, v_zip, v_c_phone,
			v_c_since, v_c_credit, v_c_credit_lim, v_c_discount, v_c_balance
		FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id FOR UPDATE;
	-- C_BALANCE -= H_AMOUNT, C_YTD_PAYMENT += H_AMOUNT, C_PAYMENT_CNT += 1;
	-- bad credit: C_ID, C_D_ID, C_W_ID, D_ID, W_ID, H_AMOUNT inserted at the
	-- left of C_DATA, which never exceeds 500 characters.
	IF v_c_credit = 'BC' THEN
		UPDATE customer SET c_balance = c_balance - v_amount, c_ytd_payment = c_ytd_payment + v_amount,
				c_payment_cnt = c_payment_cnt + 1,
				c_data = LEFT(CONCAT(v_c_id, ' ', p_c_d_id, ' ', p_c_w_id, ' ', p_d_id, ' ', p_w_id, ' ',
					v_amount, ' ', c_data), 500)
			WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
	ELSE
		UPDATE customer SET c_balance = c_balance - v_amount, c_ytd_payment = c_ytd_payment + v_amount,
				c_payment_cnt = c_payment_cnt + 1
			WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
	END IF;
	-- H_DATA is W_NAME and D_NAME separated by 4 spaces.
	INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
		VALUES (v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, p_h_date, v_amount,
			CONCAT(v_w_name, '    ', v_d_name));
	COMMIT;
	SELECT v_c_id, v_c_balance - v_amount;
END
$$

-- TPC-C 2.6.2.2 Order-Status (read-only): the customer, its last order and
-- that order's lines (returned as their count and sums).
CREATE PROCEDURE oltplab_order_status(
	IN p_w_id INT, IN p_d_id INT, IN p_by_name INT, IN p_c_last VARCHAR(16) CHARACTER SET utf8mb4, IN p_c_id INT)
BEGIN
	DECLARE v_n, v_c_id, v_o_id, v_o_carrier_id, v_lines, v_quantity INT;
	DECLARE v_c_first, v_c_last VARCHAR(16);
	DECLARE v_c_middle CHAR(2);
	DECLARE v_c_balance DECIMAL(12,2);
	DECLARE v_o_entry_d, v_delivery_d DATETIME;
	DECLARE v_amount DECIMAL(12,2);
	DECLARE EXIT HANDLER FOR SQLEXCEPTION
	BEGIN
		ROLLBACK;
		RESIGNAL;
	END;

	START TRANSACTION READ ONLY;
	IF p_by_name THEN
		SELECT COUNT(*) INTO v_n FROM customer
			WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last COLLATE utf8mb4_bin;
		IF v_n = 0 THEN
			SIGNAL SQLSTATE 'OLNC1' SET MYSQL_ERRNO = 30002, MESSAGE_TEXT = 'no customer of that last name';
		END IF;
		SET v_n = (v_n + 1) DIV 2 - 1;
		SELECT c_id INTO v_c_id FROM customer
			WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last COLLATE utf8mb4_bin
			ORDER BY c_first LIMIT v_n, 1;
	ELSE
		SET v_c_id = p_c_id;
	END IF;
	SELECT c_balance, c_first, c_middle, c_last INTO v_c_balance, v_c_first, v_c_middle, v_c_last
		FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = v_c_id;
	-- The customer's order with the largest O_ID.
	SELECT o_id, o_entry_d, o_carrier_id INTO v_o_id, v_o_entry_d, v_o_carrier_id
		FROM orders WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = v_c_id
		ORDER BY o_id DESC LIMIT 1;
	-- Its lines: OL_I_ID, OL_SUPPLY_W_ID, OL_QUANTITY, OL_AMOUNT, OL_DELIVERY_D.
	SELECT COUNT(ol_i_id + ol_supply_w_id), SUM(ol_quantity), SUM(ol_amount), MAX(ol_delivery_d)
		INTO v_lines, v_quantity, v_amount, v_delivery_d
		FROM order_line WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = v_o_id;
	COMMIT;
	SELECT v_c_id, v_c_balance, v_o_id, v_lines;
END
$$

-- TPC-C 2.7.4.2 Delivery: the ten districts of one warehouse in one
-- transaction. A district without an undelivered order is skipped and
-- counted; the count is returned.
CREATE PROCEDURE oltplab_delivery(IN p_w_id INT, IN p_carrier_id INT, IN p_delivery_d DATETIME)
BEGIN
	DECLARE v_d_id INT DEFAULT 1;
	DECLARE v_o_id, v_c_id INT;
	DECLARE v_amount DECIMAL(12,2);
	DECLARE v_skipped INT DEFAULT 0;
	DECLARE EXIT HANDLER FOR SQLEXCEPTION
	BEGIN
		ROLLBACK;
		RESIGNAL;
	END;

	START TRANSACTION;
	WHILE v_d_id <= 10 DO
		-- The oldest undelivered order of the district.
		SET v_o_id = NULL;
		SELECT no_o_id INTO v_o_id FROM new_order
			WHERE no_w_id = p_w_id AND no_d_id = v_d_id ORDER BY no_o_id LIMIT 1 FOR UPDATE;
		IF v_o_id IS NULL THEN
			SET v_skipped = v_skipped + 1;
		ELSE
			DELETE FROM new_order WHERE no_w_id = p_w_id AND no_d_id = v_d_id AND no_o_id = v_o_id;
			SELECT o_c_id INTO v_c_id FROM orders WHERE o_w_id = p_w_id AND o_d_id = v_d_id AND o_id = v_o_id;
			UPDATE orders SET o_carrier_id = p_carrier_id WHERE o_w_id = p_w_id AND o_d_id = v_d_id AND o_id = v_o_id;
			UPDATE order_line SET ol_delivery_d = p_delivery_d
				WHERE ol_w_id = p_w_id AND ol_d_id = v_d_id AND ol_o_id = v_o_id;
			SELECT COALESCE(SUM(ol_amount), 0) INTO v_amount FROM order_line
				WHERE ol_w_id = p_w_id AND ol_d_id = v_d_id AND ol_o_id = v_o_id;
			UPDATE customer SET c_balance = c_balance + v_amount, c_delivery_cnt = c_delivery_cnt + 1
				WHERE c_w_id = p_w_id AND c_d_id = v_d_id AND c_id = v_c_id;
		END IF;
		SET v_d_id = v_d_id + 1;
	END WHILE;
	COMMIT;
	SELECT v_skipped;
END
$$

-- TPC-C 2.8.2.2 Stock-Level (read-only): distinct items of the district's
-- last 20 orders whose stock is below the threshold.
CREATE PROCEDURE oltplab_stock_level(IN p_w_id INT, IN p_d_id INT, IN p_threshold INT)
BEGIN
	DECLARE v_next_o_id, v_low INT;
	DECLARE EXIT HANDLER FOR SQLEXCEPTION
	BEGIN
		ROLLBACK;
		RESIGNAL;
	END;

	START TRANSACTION READ ONLY;
	SELECT d_next_o_id INTO v_next_o_id FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
	SELECT COUNT(DISTINCT s_i_id) INTO v_low
		FROM order_line JOIN stock ON s_i_id = ol_i_id
		WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id < v_next_o_id AND ol_o_id >= v_next_o_id - 20
			AND s_w_id = p_w_id AND s_quantity < p_threshold;
	COMMIT;
	SELECT v_low;
END
$$

-- oltplab_stock_quantity is S_QUANTITY after the order lines (the lists
-- of oltplab_new_order) that name stock row (p_w_id, p_i_id), each applying
-- TPC-C 2.4.2.2's rule in turn, in line order.
CREATE FUNCTION oltplab_stock_quantity(p_quantity INT, p_w_id INT, p_i_id INT,
	p_i_ids VARCHAR(256), p_supply_w_ids VARCHAR(256), p_quantities VARCHAR(128)) RETURNS INT
DETERMINISTIC NO SQL
BEGIN
	DECLARE v_n, v_ol INT DEFAULT 1;
	WHILE v_n <= 1 + LENGTH(p_i_ids) - LENGTH(REPLACE(p_i_ids, ',', '')) DO
		IF CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_i_ids, ',', v_n), ',', -1) AS UNSIGNED) = p_i_id
				AND CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_supply_w_ids, ',', v_n), ',', -1) AS UNSIGNED) = p_w_id THEN
			SET v_ol = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_quantities, ',', v_n), ',', -1) AS UNSIGNED);
			IF p_quantity >= v_ol + 10 THEN
				SET p_quantity = p_quantity - v_ol;
			ELSE
				SET p_quantity = p_quantity - v_ol + 91;
			END IF;
		END IF;
		SET v_n = v_n + 1;
	END WHILE;
	RETURN p_quantity;
END
$$

DELIMITER ;
