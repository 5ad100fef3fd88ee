"""What a push does to a switch's config beyond the rendered file: which sections fabricgen owns
(`ownership`), the file actually staged on the device (`stage`: rendered owned sections plus the
management overlay and the device's own untouched sections), the pre-flight that refuses a file
that would lock Ansible out (`lockout`), and the drift check (`drift`)."""
