-- 021 (issue 19): a check records when each moment of its connection came (name resolved, TCP
-- connected, TLS established, first byte), so a slow answer can be told from a slow check queue.
ALTER TABLE checks ADD COLUMN dns_ms INTEGER;
ALTER TABLE checks ADD COLUMN connect_ms INTEGER;
ALTER TABLE checks ADD COLUMN tls_ms INTEGER;
ALTER TABLE checks ADD COLUMN ttfb_ms INTEGER;
