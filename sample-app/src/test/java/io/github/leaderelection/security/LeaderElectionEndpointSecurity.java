package io.github.leaderelection.security;

import org.springframework.boot.security.autoconfigure.actuate.web.servlet.EndpointRequest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;

@Configuration(proxyBeanMethods = false)
public class LeaderElectionEndpointSecurity {

	@Bean
	SecurityFilterChain leaderElectionEndpointSecurity(HttpSecurity http) {
		http.securityMatcher(EndpointRequest.to("leaderelection"))
			.authorizeHttpRequests((requests) -> requests
				// Reads show every group, its leader and its candidate ids.
				.requestMatchers(HttpMethod.GET)
				.hasAnyRole("OPERATOR", "ADMIN")
				// Writes move leadership: yield, force-leader, force-reelection.
				.anyRequest()
				.hasRole("ADMIN"))
			.httpBasic(Customizer.withDefaults())
			// Called by scripts and tools with credentials on every request, not by a
			// browser session, which is what CSRF tokens protect.
			.csrf((csrf) -> csrf.disable());
		return http.build();
	}

}
