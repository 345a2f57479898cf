-- 024 (issue 22): the websocket, grpc, smtp, postgres, mysql, redis, docker and domain monitor types
-- (docs/monitors.md "Types and attributes"). Each column belongs to the types docs/monitors.md names
-- and stays NULL (or its default) on the others; db_password is sealed like the api_auth_* secrets.
ALTER TABLE monitors ADD COLUMN ws_send TEXT;
ALTER TABLE monitors ADD COLUMN ws_expect TEXT;
ALTER TABLE monitors ADD COLUMN grpc_service TEXT;
ALTER TABLE monitors ADD COLUMN grpc_tls INTEGER NOT NULL DEFAULT 0;
ALTER TABLE monitors ADD COLUMN smtp_security TEXT;
ALTER TABLE monitors ADD COLUMN db_password_enc TEXT;
ALTER TABLE monitors ADD COLUMN db_query TEXT;
ALTER TABLE monitors ADD COLUMN db_tls INTEGER NOT NULL DEFAULT 0;
ALTER TABLE monitors ADD COLUMN redis_username TEXT;
ALTER TABLE monitors ADD COLUMN docker_host TEXT;
ALTER TABLE monitors ADD COLUMN domain_expiry_warn_days INTEGER;
ALTER TABLE monitors ADD COLUMN domain_expires_at INTEGER;
